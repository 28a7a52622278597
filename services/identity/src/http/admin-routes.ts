import { Router } from 'express';
import { StatusChangeBody } from '@payments/contracts';
import { bodyValidator, requireAuth, type TokenVerifier } from '@payments/service-kit';
import { etagOf, toUserView } from '../domain/user.js';
import type { UserService } from '../use-cases/user-service.js';
import { claimsOf, requestIdOf, userIdParam } from './request-context.js';

const readStatusChange = bodyValidator(StatusChangeBody);

export function adminRoutes(users: UserService, verifier: TokenVerifier): Router {
  const router = Router();

  router.patch('/admin/users/:id/status', requireAuth(verifier), async (req, res) => {
    const id = userIdParam(req);
    const { status } = readStatusChange(req);
    const user = await users.setStatus(claimsOf(req), id, status, requestIdOf(req));
    res.set('ETag', etagOf(user)).set('Cache-Control', 'no-store').json(toUserView(user));
  });

  return router;
}
