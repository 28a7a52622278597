import type { Request } from 'express';
import { authRequired, clientAddressKey, notFound, type AuthClaims } from '@payments/service-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id that is not a UUID names no user: 404, as for any other missing user. */
export function userIdParam(req: Request): string {
  const id = req.params.id;
  if (typeof id !== 'string' || !UUID.test(id)) throw notFound('User');
  return id.toLowerCase();
}

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
