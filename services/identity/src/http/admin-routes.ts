import { Router } from 'express';
import { StatusChangeBody, UserSearchQuery } from '@payments/contracts';
import { bodyValidator, queryValidator, requireAuth, type TokenVerifier } from '@payments/service-kit';
import { etagOf, toUserView } from '../domain/user.js';
import type { UserService } from '../use-cases/user-service.js';
import { claimsOf, requestIdOf, userIdParam } from './request-context.js';

const readStatusChange = bodyValidator(StatusChangeBody);
const readUserSearch = queryValidator(UserSearchQuery);

export function adminRoutes(users: UserService, verifier: TokenVerifier): Router {
  const router = Router();

  router.get('/admin/users', requireAuth(verifier), async (req, res) => {
    const { limit, offset, username, email, q, status } = readUserSearch(req);
    const page = await users.findUsers(
      claimsOf(req),
      { username, email, prefix: q, status },
      { limit, offset },
    );
    res.set('Cache-Control', 'no-store').json({
      data: page.data.map(toUserView),
      pagination: { limit, offset, total: page.total },
    });
  });

  router.patch('/admin/users/:id/status', requireAuth(verifier), async (req, res) => {
    const id = userIdParam(req);
    const { status, reason } = readStatusChange(req);
    const user = await users.setStatus(claimsOf(req), id, status, {
      reason: reason ?? null,
      correlationId: requestIdOf(req),
    });
    res.set('ETag', etagOf(user)).set('Cache-Control', 'no-store').json(toUserView(user));
  });

  return router;
}
