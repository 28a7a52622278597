import { Router } from 'express';
import { StatusChangeBody, UserSearchQuery } from '@payments/contracts';
import {
  bodyValidator,
  pageRequestOf,
  queryValidator,
  renderPage,
  requireAuth,
  type TokenVerifier,
} from '@payments/service-kit';
import { etagOf, toUserView } from '../domain/user.js';
import type { UserService } from '../use-cases/user-service.js';
import { claimsOf, requestIdOf, userIdParam } from './request-context.js';

const readStatusChange = bodyValidator(StatusChangeBody);
const readUserSearch = queryValidator(UserSearchQuery);

export function adminRoutes(users: UserService, verifier: TokenVerifier): Router {
  const router = Router();

  router.get('/admin/users', requireAuth(verifier), async (req, res) => {
    const query = readUserSearch(req);
    const { username, email, q, id_prefix: idPrefix, status } = query;
    const request = pageRequestOf(query);
    const page = await users.findUsers(
      claimsOf(req),
      { username, email, prefix: q, idPrefix, status },
      request,
    );
    res.set('Cache-Control', 'no-store').json(renderPage(page, request, toUserView));
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
