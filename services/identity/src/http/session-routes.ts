import { Router, type Request, type Response } from 'express';
import { LoginBody } from '@payments/contracts';
import {
  accessDenied,
  bodyValidator,
  requireAuth,
  validationError,
  type AuthClaims,
  type TokenVerifier,
} from '@payments/service-kit';
import type { IssuedToken } from '../domain/token-issuer.js';
import type { LoginName, SessionService } from '../use-cases/session-service.js';
import { claimsOf, clientAddressOf, requestIdOf } from './request-context.js';

const readLoginBody = bodyValidator(LoginBody);

function readLogin(req: Request): { name: LoginName; password: string } {
  const body = readLoginBody(req);
  const names = (['username', 'email', 'identity'] as const).flatMap((kind) => {
    const value = body[kind];
    return value === undefined ? [] : [{ kind, value }];
  });
  const [name] = names;
  if (!name || names.length > 1) {
    throw validationError(
      [{ field: 'identity', message: 'give exactly one of username, email or identity' }],
      'Say who is logging in with exactly one of username, email or identity',
    );
  }
  return { name, password: body.password };
}

function sendToken(res: Response, issued: IssuedToken): void {
  res
    .set('Cache-Control', 'no-store')
    .json({ token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn });
}

/** A token an API key was exchanged for is no session: refreshing or ending it would touch the key (ADR 0121). */
function sessionClaimsOf(req: Request): AuthClaims {
  const claims = claimsOf(req);
  if (claims.apiKey) {
    throw accessDenied('An API key is not a session: revoke it with DELETE /api-keys/{id} instead');
  }
  return claims;
}

export function sessionRoutes(sessions: SessionService, verifier: TokenVerifier): Router {
  const router = Router();
  const authenticated = requireAuth(verifier);

  const login = async (req: Request, res: Response) => {
    const { name, password } = readLogin(req);
    sendToken(res, await sessions.login({ name, password, clientAddress: clientAddressOf(req) }));
  };
  router.post('/auth/login', login);
  router.post('/login', login);

  router.post('/auth/refresh', authenticated, async (req, res) => {
    sendToken(res, await sessions.refresh(sessionClaimsOf(req), requestIdOf(req)));
  });

  router.post('/auth/logout', authenticated, async (req, res) => {
    await sessions.logout(sessionClaimsOf(req), requestIdOf(req));
    res.status(204).end();
  });

  return router;
}
