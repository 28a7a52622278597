import { Router, type Request } from 'express';
import { ApiKeyExchangeBody, NewApiKeyBody, PageQuery } from '@payments/contracts';
import {
  bodyValidator,
  pageRequestOf,
  queryValidator,
  renderPage,
  requireAuth,
  type TokenVerifier,
} from '@payments/service-kit';
import type { ApiKey } from '../data/api-key-repository.js';
import type { ApiKeyService } from '../use-cases/api-key-service.js';
import { claimsOf, idParam, requestIdOf } from './request-context.js';

const readNewKey = bodyValidator(NewApiKeyBody);
const readPage = queryValidator(PageQuery);
const readExchange = bodyValidator(ApiKeyExchangeBody);

const keyIdParam = (req: Request): string => idParam(req, 'API key');

/** A key as the API shows it: never the secret, nor its hash. */
export function toApiKeyView(key: ApiKey) {
  return {
    id: key.id,
    object: 'api_key' as const,
    user_id: key.userId,
    name: key.name,
    type: key.scopes ? ('restricted' as const) : ('secret' as const),
    livemode: key.livemode,
    prefix: key.prefix,
    last4: key.last4,
    scopes: key.scopes,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
  };
}

export function apiKeyRoutes(keys: ApiKeyService, verifier: TokenVerifier): Router {
  const router = Router();
  const authenticated = requireAuth(verifier);

  router.post('/api-keys', authenticated, async (req, res) => {
    const { name, expires_at: expiresAt, scopes } = readNewKey(req);
    const key = await keys.create(claimsOf(req), { name, expiresAt, scopes }, requestIdOf(req));
    res
      .status(201)
      .location(`/api-keys/${key.id}`)
      .set('Cache-Control', 'no-store')
      .json({ ...toApiKeyView(key), secret: key.secret });
  });

  router.get('/api-keys', authenticated, async (req, res) => {
    const request = pageRequestOf(readPage(req));
    const page = await keys.list(claimsOf(req), request);
    res.set('Cache-Control', 'no-store').json(renderPage(page, request, toApiKeyView));
  });

  router.delete('/api-keys/:id', authenticated, async (req, res) => {
    await keys.revoke(claimsOf(req), keyIdParam(req), requestIdOf(req));
    res.status(204).end();
  });

  // Internal (SERVICE_TOKEN): the gateway's exchange of a key for the token services verify (docs/adr/0121).
  router.post('/internal/api-keys/exchange', async (req, res) => {
    const { issued, key } = await keys.exchange(readExchange(req).secret);
    res.set('Cache-Control', 'no-store').json({
      token: issued.token,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      api_key_id: key.id,
    });
  });

  return router;
}
