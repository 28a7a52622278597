import type { RequestHandler } from 'express';
import { API_VERSIONS, VERSION_HEADER, type ApiVersion } from '@payments/contracts';
import { AppError } from '@payments/service-kit';
import {
  resolveApiVersion,
  SUPPORTED_VERSIONS_TEXT,
  VERSION_LIFECYCLE,
  type VersionLifecycle,
  type VersionResolution,
} from '../domain/api-version.js';

const SOURCE_FIELD = { path: 'path', accept: 'Accept', header: 'X-API-Version' } as const;

/** What versioning makes of a request: its resolution, and the url the services see (no version prefix). */
export type VersionedUrl =
  | { ok: true; resolution: Extract<VersionResolution, { ok: true }>; url: string }
  | { ok: false; error: AppError };

/** Resolves the version of a request from its url and headers; pure, so it can decide a route before acting. */
export function versionUrl(
  url: string,
  accept: string | undefined,
  versionHeader: string | undefined,
): VersionedUrl {
  const [path = '/', query] = splitUrl(url);
  const resolution = resolveApiVersion({ path, accept, versionHeader });
  if (!resolution.ok) {
    const field = SOURCE_FIELD[resolution.source];
    return {
      ok: false,
      error: new AppError(
        'VALIDATION_ERROR',
        `Unsupported API version "${resolution.given}" in ${field}. Supported versions: ${SUPPORTED_VERSIONS_TEXT}`,
        [{ field, message: `must be one of ${API_VERSIONS.join(', ')}` }],
      ),
    };
  }
  if (!resolution.prefix) return { ok: true, resolution, url };
  return { ok: true, resolution, url: query === undefined ? resolution.path : `${resolution.path}?${query}` };
}

/** `Deprecation` and `Sunset` for a version being retired; none for a current one. */
export function retirementHeaders(
  lifecycle: Partial<Record<ApiVersion, VersionLifecycle>>,
  version: ApiVersion,
): [string, string][] {
  const retiring = lifecycle[version];
  if (!retiring) return [];
  return [
    ['Deprecation', `@${Math.floor(retiring.deprecatedAt.getTime() / 1000)}`],
    ['Sunset', retiring.sunsetAt.toUTCString()],
  ];
}

/**
 * Resolves the API version, strips a `/v1.x` prefix (keeping it in `X-Forwarded-Prefix` so services and problem
 * `instance`s still name the path the client used), forwards the version to services and echoes it to the client.
 */
export function versioning(
  lifecycle: Partial<Record<ApiVersion, VersionLifecycle>> = VERSION_LIFECYCLE,
): RequestHandler {
  return (req, res, next) => {
    const versioned = versionUrl(req.url, req.get('accept'), req.get(VERSION_HEADER));
    delete req.headers['x-forwarded-prefix'];
    if (!versioned.ok) return next(versioned.error);
    const { resolution } = versioned;
    if (resolution.prefix) {
      req.url = versioned.url;
      req.originalUrl = req.url;
      req.headers['x-forwarded-prefix'] = resolution.prefix;
      res.locals.versionPrefix = resolution.prefix;
    }
    req.headers[VERSION_HEADER] = resolution.version;
    res.set('X-API-Version', resolution.version);
    res.vary('Accept').vary('X-API-Version');
    for (const [name, value] of retirementHeaders(lifecycle, resolution.version)) res.set(name, value);
    next();
  };
}

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}
