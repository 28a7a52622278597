import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { isApiKey, type ApiKeyScope } from '@payments/contracts';
import {
  AppError,
  accessDenied,
  authRequired,
  bearerToken,
  isInvalidToken,
  type AuthClaims,
  type ServiceClient,
  type TokenVerifier,
} from '@payments/service-kit';
import { requiredScope } from '../domain/api-key-scopes.js';

export interface KeyExchangeOptions {
  /** Identity, with the gateway's SERVICE_TOKEN: `/internal/api-keys/exchange`. */
  identity: ServiceClient;
  /** Checks the exchanged token as every service will: signature, expiry and revocations (the key's among them). */
  verifier: TokenVerifier;
  /** How many keys' tokens to keep. */
  cacheSize?: number;
  now?: () => number;
}

interface Exchanged {
  token: string;
  claims: AuthClaims;
}

/** Refetched this long before the token expires, so that none expires on its way to a service. */
const EXPIRY_MARGIN_SECONDS = 10;

const refused = () => authRequired('The API key is invalid, expired or revoked');

/**
 * Turns an API key into the short-lived token identity exchanges it for (docs/adr/0121), kept by the key's
 * SHA-256 until shortly before it expires. A kept token is checked against the revocations at every use, as any
 * token is: a revoked key's token is refused at once, and is then exchanged again, which identity refuses; a token
 * revoked for another reason (a password change cuts the user's tokens) is simply replaced by a fresh one.
 */
export function createKeyExchange(options: KeyExchangeOptions) {
  const { identity, verifier } = options;
  const capacity = options.cacheSize ?? 10_000;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const kept = new Map<string, Exchanged>();
  // One exchange at a time per key: a burst of requests with a key not kept yet asks identity once.
  const pending = new Map<string, Promise<Exchanged>>();

  const exchange = async (secret: string): Promise<Exchanged> => {
    const answer = await identity.post<{ token?: string; detail?: string }>('/internal/api-keys/exchange', {
      secret,
    });
    if (answer.status === 401 || answer.status === 400) throw refused();
    if (answer.status === 403) throw accessDenied(answer.body?.detail);
    if (answer.status !== 200 || typeof answer.body?.token !== 'string') {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The API key cannot be checked now; try again shortly',
        undefined,
        {
          'Retry-After': '1',
        },
      );
    }
    const { token } = answer.body;
    try {
      return { token, claims: await verifier.verify(token) };
    } catch (error) {
      if (isInvalidToken(error)) throw refused();
      throw error;
    }
  };

  return {
    async verify(secret: string): Promise<Exchanged> {
      const id = createHash('sha256').update(secret).digest('base64url');
      const known = kept.get(id);
      if (known && now() < known.claims.expiresAt - EXPIRY_MARGIN_SECONDS) {
        try {
          return { token: known.token, claims: await verifier.verify(known.token) };
        } catch (error) {
          if (!isInvalidToken(error)) throw error;
        }
      }
      kept.delete(id);
      const running = pending.get(id);
      if (running) return running;
      const exchanging = exchange(secret)
        .then((fresh) => {
          if (kept.size >= capacity) kept.delete(kept.keys().next().value as string);
          kept.set(id, fresh);
          return fresh;
        })
        .finally(() => pending.delete(id));
      pending.set(id, exchanging);
      return exchanging;
    },
  };
}

export type KeyExchange = ReturnType<typeof createKeyExchange>;

/**
 * Authenticates a bearer token, or an API key: then the request goes on to its service with the token the key was
 * exchanged for, which the service verifies like any other, never the key itself.
 */
export function authenticateKeys(keys: KeyExchange, tokens: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    const credential = bearerToken(req.get('authorization'));
    if (!credential || !isApiKey(credential)) return tokens(req, res, next);
    try {
      const { token, claims } = await keys.verify(credential);
      req.auth = claims;
      req.headers.authorization = `Bearer ${token}`;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** A restricted key may make only the requests its scopes grant; anything else is 403 and reaches no service. */
export function requireKeyScopes(): RequestHandler {
  return (req, _res, next) => {
    const scopes = req.auth?.apiKey?.scopes;
    if (!scopes) return next();
    const needed: ApiKeyScope | undefined = requiredScope(req.method, req.path);
    if (needed && scopes.includes(needed)) return next();
    next(
      accessDenied(
        needed
          ? `This API key lacks the \`${needed}\` scope this request needs`
          : 'A restricted API key cannot make this request',
      ),
    );
  };
}
