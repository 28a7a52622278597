import type { RequestHandler } from 'express';
import { requireAuth, type TokenVerifier } from '@payments/service-kit';
import { isPublicRoute } from '../domain/route-table.js';

/** Bearer token required except on the public routes; the Authorization header still goes to the service. */
export function authenticateAtEdge(verifier: TokenVerifier): RequestHandler {
  const required = requireAuth(verifier);
  return (req, res, next) => {
    if (isPublicRoute(req.method, req.path)) return next();
    return required(req, res, next);
  };
}
