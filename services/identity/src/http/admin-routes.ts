import { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { bodyValidator, requireAuth, type TokenVerifier } from '@payments/service-kit';
import { etagOf, toUserView } from '../domain/user.js';
import type { UserService } from '../use-cases/user-service.js';
import { claimsOf, requestIdOf, userIdParam } from './request-context.js';

const StatusChangeSchema = Type.Object(
  { status: Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('locked')]) },
  { additionalProperties: false },
);

const readStatusChange = bodyValidator(StatusChangeSchema);

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
