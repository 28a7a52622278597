import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/** The catalogue changes only with a deploy or a restart with other settings; five minutes of reuse is safe. */
export const CATALOGUE_CACHE_CONTROL = 'public, max-age=300';
/** Statistics move with every account opened: caches may keep them but must ask again each time. */
export const REVALIDATE_CACHE_CONTROL = 'no-cache';

/** A strong entity tag: a hash of the exact bytes sent. */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** Whether an If-None-Match header names `etag`; the weak comparison RFC 9110 prescribes for this header. */
export function ifNoneMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** Sends `body` as JSON with an ETag, or 304 with no body when the client's If-None-Match already has it. */
export function sendWithEntityTag(req: Request, res: Response, body: unknown, cacheControl: string): void {
  const json = JSON.stringify(body);
  const etag = entityTag(json);
  res.set({ ETag: etag, 'Cache-Control': cacheControl });
  // Not req.fresh: it ignores validators when the request says `Cache-Control: no-cache`, which fetch sends
  // with every conditional request; an origin server answers the condition regardless.
  if (ifNoneMatchHolds(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  res.type('application/json').send(json);
}
