import { Router, type Request, type Response } from 'express';
import { NewUserBody, UserDeletionBody, UserUpdateBody } from '@payments/contracts';
import {
  bodyValidator,
  notFound,
  requireAuth,
  validationError,
  type TokenVerifier,
} from '@payments/service-kit';
import { etagOf, toUserView, versionsFromIfMatch, type User } from '../domain/user.js';
import type { UserService, UserUpdate } from '../use-cases/user-service.js';
import { claimsOf, clientAddressOf, requestIdOf, userIdParam } from './request-context.js';

const READ_ONLY_FIELDS = new Set(['id', 'role', 'status', 'created_at', 'updated_at']);

const readNewUser = bodyValidator(NewUserBody);
const readUpdate = bodyValidator(UserUpdateBody);
const readDeletion = bodyValidator(UserDeletionBody);

function readUserUpdate(req: Request): UserUpdate {
  const body: unknown = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const readOnly = Object.keys(body).filter((field) => READ_ONLY_FIELDS.has(field));
    if (readOnly.length > 0) {
      throw validationError(
        readOnly.map((field) => ({ field, message: 'is read-only' })),
        'Only username, email and password can be changed',
      );
    }
  }
  const { current_password: currentPassword, ...changes } = readUpdate(req);
  if (Object.keys(changes).length === 0) {
    throw validationError(
      [{ field: 'body', message: 'names nothing to change' }],
      'Give at least one of username, email and password to change',
    );
  }
  return { ...changes, currentPassword };
}

/**
 * A deletion must be confirmed with `?confirm=true` or `{ "confirm": true }`; the body may also carry an admin's
 * reason for deleting someone else.
 */
function readDeletionOf(req: Request): { confirmed: boolean; reason: string | null } {
  const body = req.body === undefined ? {} : readDeletion(req);
  return { confirmed: req.query.confirm === 'true' || body.confirm === true, reason: body.reason ?? null };
}

function sendUser(res: Response, user: User, status = 200): void {
  res.status(status).set('ETag', etagOf(user)).set('Cache-Control', 'no-store').json(toUserView(user));
}

export function userRoutes(users: UserService, verifier: TokenVerifier): Router {
  const router = Router();
  const authenticated = requireAuth(verifier);

  router.post('/user', async (req, res) => {
    const user = await users.register(readNewUser(req), clientAddressOf(req));
    res.location(`/user/${user.id}`);
    sendUser(res, user, 201);
  });

  router.get('/user/:id', authenticated, async (req, res) => {
    sendUser(res, await users.get(claimsOf(req), userIdParam(req)));
  });

  // Internal (SERVICE_TOKEN, never routed by the gateway): the user as the API renders it, for webhook payloads.
  router.get('/internal/users/:id', async (req, res) => {
    const user = await users.find(userIdParam(req));
    if (!user) throw notFound('User');
    res.set('Cache-Control', 'no-store').json(toUserView(user));
  });

  router.put('/user/:id', authenticated, async (req, res) => {
    const id = userIdParam(req);
    const changes = readUserUpdate(req);
    const user = await users.update(claimsOf(req), id, changes, {
      expectedVersions: versionsFromIfMatch(req.get('if-match')),
      correlationId: requestIdOf(req),
      clientAddress: clientAddressOf(req),
    });
    sendUser(res, user);
  });

  router.delete('/user/:id', authenticated, async (req, res) => {
    const id = userIdParam(req);
    const { confirmed, reason } = readDeletionOf(req);
    if (!confirmed) {
      throw validationError(
        [{ field: 'confirm', message: 'must be true' }],
        'Deleting a user must be confirmed with ?confirm=true or a body of { "confirm": true }',
      );
    }
    await users.remove(claimsOf(req), id, { reason, correlationId: requestIdOf(req) });
    res.status(204).end();
  });

  return router;
}
