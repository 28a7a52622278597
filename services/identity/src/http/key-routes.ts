import { Router } from 'express';
import { toJwks, type SigningKeys } from '../domain/signing-keys.js';
import type { RevocationService } from '../use-cases/revocation-service.js';

/** Public keys for every verifier, and the revocations in force for verifiers that start after they were made. */
export function keyRoutes(keys: SigningKeys, revocations: RevocationService): Router {
  const router = Router();
  const jwks = JSON.stringify(toJwks(keys));

  router.get('/.well-known/jwks.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=60').type('application/json').send(jwks);
  });

  // Internal: the gateway does not route /internal/*; services reach identity directly.
  router.get('/internal/revocations', async (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ data: await revocations.active() });
  });

  return router;
}
