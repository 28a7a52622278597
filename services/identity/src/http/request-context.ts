import type { Request } from 'express';
import { authRequired, clientAddressKey, notFound, type AuthClaims } from '@payments/service-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The path's `id`: one that is not a UUID names no `resource`, so it is a 404, as for any other missing one. */
export function idParam(req: Request, resource: string): string {
  const id = req.params.id;
  if (typeof id !== 'string' || !UUID.test(id)) throw notFound(resource);
  return id.toLowerCase();
}

export const userIdParam = (req: Request): string => idParam(req, 'User');

export function requestIdOf(req: Request): string {
  return req.get('x-request-id') ?? 'unknown';
}

export function claimsOf(req: Request): AuthClaims {
  if (!req.auth) throw authRequired();
  return req.auth;
}

/**
 * The key the caller's address is limited under. `req.ip` believes X-Forwarded-For only from TRUSTED_PROXIES (the
 * gateway, which sends the client address it derived); a caller reaching identity directly is its socket address.
 */
export function clientAddressOf(req: Request): string {
  return clientAddressKey(req.ip ?? req.socket.remoteAddress);
}
