import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { accessDenied, AppError, notFound } from '@payments/service-kit';
import { isUuid } from '../domain/identifiers.js';
import type { Viewer } from '../domain/viewer.js';

export function viewerOf(req: Request): Viewer {
  if (!req.auth) throw new AppError('AUTH_REQUIRED', 'A valid bearer token is required');
  return { userId: req.auth.userId, role: req.auth.role };
}

/** The viewer, who must be an admin: anyone else is refused 403, saying what only an admin may do. */
export function adminOf(req: Request, what: string): Viewer {
  const viewer = viewerOf(req);
  if (viewer.role !== 'admin') throw accessDenied(`Only an administrator may ${what}`);
  return viewer;
}

/** A path id that is not a UUID names nothing: 404, like a missing resource. */
export function pathId(req: Request, what: string, name = 'id'): string {
  const id = req.params[name];
  if (!isUuid(id)) throw notFound(what);
  return id.toLowerCase();
}

export function correlationIdOf(req: Request): string {
  return req.get('x-request-id') ?? randomUUID();
}
