import type { Request } from 'express';
import { DEFAULT_VERSION, isApiVersion, VERSION_HEADER, type ApiVersion } from '@payments/contracts';

/** The version the gateway resolved for this request; a direct call without one gets the default. */
export function apiVersionOf(req: Request): ApiVersion {
  const given = req.get(VERSION_HEADER)?.replace(/^v/, '');
  return given && isApiVersion(given) ? given : DEFAULT_VERSION;
}
