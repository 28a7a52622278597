import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { RequestHandler } from 'express';
import { TOKEN_ALGORITHM, type EventData, type Role } from '@payments/contracts';
import { AppError, authRequired } from './errors.js';
import type { Logger } from './logger.js';

export { TOKEN_ALGORITHM, type Role };

export interface AuthClaims {
  userId: string;
  role: Role;
  jti: string;
  issuedAt: number;
  expiresAt: number;
  /** When the user last gave their password (`auth_time`); a refresh carries it on. `iat` when absent. */
  authTime: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: AuthClaims;
    }
  }
}

export interface TokenVerifier {
  verify(token: string): Promise<AuthClaims>;
}

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  revocations?: RevocationList;
  /**
   * False while the denylist may be incomplete (revocations made before this process started not loaded yet):
   * every token is then refused with 503 rather than judged against a list that may lack its revocation.
   */
  revocationsLoaded?: () => boolean;
  /** The clock expiry is judged by, in epoch seconds (tests move it). */
  now?: () => number;
}

class InvalidTokenError extends Error {}

const epochSeconds = () => Math.floor(Date.now() / 1000);

/** Verifies with a fixed key set; pinned algorithm, issuer and audience. */
export function verifyWithKeys(
  token: string,
  keyFor: (kid: string) => KeyObject | undefined,
  options: TokenVerifierOptions,
): AuthClaims {
  refuseWhileIncomplete(options);
  return refuseRevoked(verifySignature(token, keyFor, options).claims, options.revocations);
}

interface SignedClaims {
  claims: AuthClaims;
  kid: string;
  key: KeyObject;
}

/** Signature, algorithm, issuer, audience, expiry and claims; revocation is the caller's to check. */
function verifySignature(
  token: string,
  keyFor: (kid: string) => KeyObject | undefined,
  options: TokenVerifierOptions,
): SignedClaims {
  const decoded = jwt.decode(token, { complete: true });
  const kid = decoded?.header.kid;
  if (!decoded || decoded.header.alg !== TOKEN_ALGORITHM || !kid)
    throw new InvalidTokenError('malformed token');
  const key = keyFor(kid);
  if (!key) throw new InvalidTokenError('unknown key');
  const payload = jwt.verify(token, key, {
    algorithms: [TOKEN_ALGORITHM],
    issuer: options.issuer,
    audience: options.audience,
    clockTimestamp: (options.now ?? epochSeconds)(),
  }) as jwt.JwtPayload;
  const { sub, role, jti, iat, exp } = payload;
  if (!sub || !jti || !iat || !exp || (role !== 'user' && role !== 'admin')) {
    throw new InvalidTokenError('token lacks required claims');
  }
  const authTime = Number.isInteger(payload.auth_time) ? (payload.auth_time as number) : iat;
  // Frozen: verifiers hand the same claims to every request that presents the token.
  const claims: AuthClaims = Object.freeze({
    userId: sub,
    role,
    jti,
    issuedAt: iat,
    expiresAt: exp,
    authTime,
  });
  return { claims, kid, key };
}

const REVOCATIONS_LOADING_RETRY_SECONDS = '2';

function refuseWhileIncomplete(options: TokenVerifierOptions): void {
  if (options.revocationsLoaded && !options.revocationsLoaded()) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'Token revocations are still loading; try again shortly',
      undefined,
      { 'Retry-After': REVOCATIONS_LOADING_RETRY_SECONDS },
    );
  }
}

function refuseRevoked(claims: AuthClaims, revocations: RevocationList | undefined): AuthClaims {
  if (revocations?.isRevoked(claims)) throw new InvalidTokenError('token revoked');
  return claims;
}

/**
 * Tokens whose signature was verified, by token string, until they expire: an ES256 check costs ~55 µs and a
 * client sends the same token with every request. Only the signature is remembered; revocation is checked on
 * every use. When full, the oldest entry goes; a token pushed out is simply verified again.
 */
function createVerifiedTokens(capacity: number, now: () => number) {
  const entries = new Map<string, SignedClaims>();
  return {
    get(token: string, keyFor: (kid: string) => KeyObject | undefined): AuthClaims | undefined {
      const entry = entries.get(token);
      if (!entry) return undefined;
      // Expired, or verified with a key the JWKS no longer serves: verify afresh, as if never cached.
      if (now() >= entry.claims.expiresAt || keyFor(entry.kid) !== entry.key) {
        entries.delete(token);
        return undefined;
      }
      return entry.claims;
    },
    add(token: string, verified: SignedClaims): void {
      if (entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(token, verified);
    },
  };
}

/**
 * Verifies tokens against the identity service's JWKS. Keys are cached; an unknown `kid` triggers one refetch
 * (at most every few seconds), so key rotation needs no restart and a flood of bogus kids costs nothing.
 * A token's verified signature is remembered until it expires, but only while the JWKS still serves the very key
 * object that verified it: every refetch builds new key objects, so after one the token is verified again, and a
 * token whose key was removed is refused exactly when it would have been without the cache.
 */
export function createJwksTokenVerifier(
  options: TokenVerifierOptions & {
    jwksUrl: string;
    logger: Logger;
    minRefetchMs?: number;
    /** How many verified tokens to remember. */
    cacheSize?: number;
  },
): TokenVerifier {
  let keys = new Map<string, KeyObject>();
  let lastFetch = 0;
  let fetching: Promise<void> | null = null;
  const minRefetchMs = options.minRefetchMs ?? 5000;
  const keyFor = (kid: string) => keys.get(kid);
  const verified = createVerifiedTokens(options.cacheSize ?? 10_000, options.now ?? epochSeconds);

  const refresh = () => {
    fetching ??= (async () => {
      try {
        const response = await fetch(options.jwksUrl, { signal: AbortSignal.timeout(3000) });
        if (!response.ok) throw new Error(`JWKS answered ${response.status}`);
        const body = (await response.json()) as { keys?: (JsonWebKey & { kid?: string })[] };
        const next = new Map<string, KeyObject>();
        for (const jwk of body.keys ?? []) {
          if (jwk.kid) next.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }));
        }
        keys = next;
        lastFetch = Date.now();
      } catch (error) {
        options.logger.warn({ err: error }, 'could not fetch the JWKS');
      } finally {
        fetching = null;
      }
    })();
    return fetching;
  };

  return {
    async verify(token) {
      refuseWhileIncomplete(options);
      const known = verified.get(token, keyFor);
      if (known) return refuseRevoked(known, options.revocations);
      const kid = jwt.decode(token, { complete: true })?.header.kid;
      if (kid && !keys.has(kid) && Date.now() - lastFetch > minRefetchMs) await refresh();
      const signed = verifySignature(token, keyFor, options);
      verified.add(token, signed);
      return refuseRevoked(signed.claims, options.revocations);
    },
  };
}

/** A token's `jti` and `exp`, read without verifying it: only ever used to deny the token, never to trust it. */
export function unverifiedTokenId(token: string | null): { jti: string; expires_at: number } | null {
  const payload = token ? jwt.decode(token, { json: true }) : null;
  const { jti, exp } = payload ?? {};
  return typeof jti === 'string' && Number.isInteger(exp) ? { jti, expires_at: exp as number } : null;
}

export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match ? (match[1] as string) : null;
}

/** Requires a valid bearer token and puts its claims on `req.auth`; anything else is 401 AUTH_REQUIRED. */
export function requireAuth(verifier: TokenVerifier): RequestHandler {
  return async (req, _res, next) => {
    const token = bearerToken(req.get('authorization'));
    if (!token) return next(authRequired());
    try {
      req.auth = await verifier.verify(token);
      next();
    } catch (error) {
      if (error instanceof InvalidTokenError || error instanceof jwt.JsonWebTokenError) {
        return next(authRequired('The bearer token is invalid, expired or revoked'));
      }
      next(error);
    }
  };
}

export interface RevocationList {
  add(revocation: EventData<'TokenRevoked'>): void;
  isRevoked(claims: AuthClaims): boolean;
}

interface Cutoff {
  /** Tokens issued before this (unix seconds) are revoked. */
  before: number;
  /** When the last token this cutoff can still matter for expires. */
  expiresAt: number;
}

/** A user's session revocations: one cutoff for all their tokens, and one per token a revocation spared. */
interface UserCutoffs {
  all?: Cutoff;
  sparing: Map<string, Cutoff>;
}

const later = (current: Cutoff | undefined, next: Cutoff): Cutoff =>
  current === undefined
    ? next
    : {
        before: Math.max(current.before, next.before),
        expiresAt: Math.max(current.expiresAt, next.expiresAt),
      };

/**
 * Revoked tokens (by jti) and revoked sessions (a user's tokens issued before a moment, perhaps but one), until
 * they expire. A token is revoked when any revocation added covers it, whatever the order they came in: a
 * password change that spares its own token never brings back a token that a disable or a logout-all revoked,
 * even in the same second or committed after it.
 */
export function createRevocationList(
  now: () => number = () => Math.floor(Date.now() / 1000),
): RevocationList {
  const byJti = new Map<string, number>();
  const byUser = new Map<string, UserCutoffs>();
  const prune = () => {
    const t = now();
    for (const [jti, expiresAt] of byJti) if (expiresAt < t) byJti.delete(jti);
    for (const [user, cutoffs] of byUser) {
      if (cutoffs.all && cutoffs.all.expiresAt < t) delete cutoffs.all;
      for (const [jti, cutoff] of cutoffs.sparing) if (cutoff.expiresAt < t) cutoffs.sparing.delete(jti);
      if (!cutoffs.all && cutoffs.sparing.size === 0) byUser.delete(user);
    }
  };
  let added = 0;
  return {
    add(revocation) {
      if (++added % 1000 === 0) prune();
      if (revocation.jti) byJti.set(revocation.jti, revocation.expires_at);
      if (revocation.user_id && revocation.issued_before !== undefined) {
        const cutoff = { before: revocation.issued_before, expiresAt: revocation.expires_at };
        const cutoffs = byUser.get(revocation.user_id) ?? { sparing: new Map<string, Cutoff>() };
        const spared = revocation.except_jti;
        if (spared) cutoffs.sparing.set(spared, later(cutoffs.sparing.get(spared), cutoff));
        else cutoffs.all = later(cutoffs.all, cutoff);
        byUser.set(revocation.user_id, cutoffs);
      }
    },
    isRevoked(claims) {
      if (byJti.has(claims.jti)) return true;
      const cutoffs = byUser.get(claims.userId);
      if (!cutoffs) return false;
      if (cutoffs.all && claims.issuedAt < cutoffs.all.before) return true;
      for (const [spared, cutoff] of cutoffs.sparing) {
        if (spared !== claims.jti && claims.issuedAt < cutoff.before) return true;
      }
      return false;
    },
  };
}

/**
 * The verifier of the user tokens identity signs: its keys from JWKS_URL (else identity's well-known path), its
 * issuer and audience, and the revocations `followIdentityRevocations` keeps (503 until they have loaded).
 */
export function identityTokenVerifier(
  config: { JWKS_URL?: string; IDENTITY_URL: string; JWT_ISSUER: string; JWT_AUDIENCE: string },
  followed: { revocations: RevocationList; sync: { isLoaded(): boolean } },
  logger: Logger,
): TokenVerifier {
  return createJwksTokenVerifier({
    jwksUrl: config.JWKS_URL ?? new URL('/.well-known/jwks.json', config.IDENTITY_URL).toString(),
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    revocations: followed.revocations,
    revocationsLoaded: followed.sync.isLoaded,
    logger,
  });
}
