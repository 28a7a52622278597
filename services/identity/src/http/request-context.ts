import type { Request } from 'express';
import { authRequired, notFound, type AuthClaims } from '@payments/service-kit';

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
 * The caller's address. Behind the gateway it is the last X-Forwarded-For entry, the one the gateway itself
 * appended; earlier entries come from the client and could be forged to dodge the per-address limit.
 */
export function clientAddressOf(req: Request, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.get('x-forwarded-for') : undefined;
  const last = forwarded?.split(',').at(-1)?.trim();
  return last || req.socket.remoteAddress || 'unknown';
}
