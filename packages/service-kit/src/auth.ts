import type { RequestHandler } from 'express';
import { decodeJwt, decodeProtectedHeader, errors as jose, jwtVerify, type JWTPayload } from 'jose';
import {
  API_KEY_SCOPES,
  TOKEN_ALGORITHM,
  type ApiKeyScope,
  type EventData,
  type Role,
} from '@payments/contracts';
import { AppError, authRequired } from './errors.js';
import type { TokenKey, TokenKeys } from './token-keys.js';

export { TOKEN_ALGORITHM, type Role };

export interface AuthClaims {
  userId: string;
  role: Role;
  jti: string;
  issuedAt: number;
  expiresAt: number;
  /** When the user last gave their password (`auth_time`); a refresh carries it on. `iat` when absent. */
  authTime: number;
  /**
   * Set when the token is one the gateway got for an API key (docs/adr/0121): the key's id, and its scopes when it
   * is a restricted key (null: a secret key, with all the user's powers).
   */
  apiKey?: { id: string; scopes: ApiKeyScope[] | null };
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
  /** How many verified tokens to remember. */
  cacheSize?: number;
}

class InvalidTokenError extends Error {}

const epochSeconds = () => Math.floor(Date.now() / 1000);

/** The key the set holds for `kid` now, or undefined when it holds none; 503 when the set cannot be had. */
async function currentKey(keys: TokenKeys, kid: string): Promise<TokenKey | undefined> {
  try {
    return await keys.keyFor({ alg: TOKEN_ALGORITHM, kid });
  } catch (error) {
    if (error instanceof jose.JWKSNoMatchingKey || error instanceof jose.JWKSMultipleMatchingKeys) {
      return undefined;
    }
    throw keysUnavailable(error);
  }
}

const KEYS_UNAVAILABLE_RETRY_SECONDS = '5';

/** The key set is too old to trust and identity cannot be asked: the token may be good, so not a 401. */
function keysUnavailable(cause: unknown): AppError {
  const error = new AppError(
    'SERVICE_UNAVAILABLE',
    'The token keys cannot be fetched from identity; try again shortly',
    undefined,
    { 'Retry-After': KEYS_UNAVAILABLE_RETRY_SECONDS },
  );
  error.cause = cause;
  return error;
}

interface SignedClaims {
  claims: AuthClaims;
  kid: string;
  key: TokenKey;
}

/** Signature, algorithm, issuer, audience, expiry and claims; revocation is the caller's to check. */
async function verifySignature(
  token: string,
  keys: TokenKeys,
  options: TokenVerifierOptions,
): Promise<SignedClaims> {
  const kid = pinnedKeyId(token);
  const resolveKey = async () => {
    const key = await currentKey(keys, kid);
    if (key === undefined) throw new InvalidTokenError('unknown key');
    return key;
  };
  const { payload, key } = await jwtVerify<JWTPayload & { role?: unknown }, TokenKey>(token, resolveKey, {
    algorithms: [TOKEN_ALGORITHM],
    issuer: options.issuer,
    audience: options.audience,
    currentDate: new Date((options.now ?? epochSeconds)() * 1000),
    requiredClaims: ['sub', 'jti', 'iat', 'exp'],
  }).catch((error: unknown) => {
    throw asTokenError(error);
  });
  const { sub, role, jti, iat, exp } = payload;
  if (!sub || typeof jti !== 'string' || !iat || !exp || (role !== 'user' && role !== 'admin')) {
    throw new InvalidTokenError('token lacks required claims');
  }
  const authTime = Number.isInteger(payload.auth_time) ? (payload.auth_time as number) : iat;
  const apiKey = apiKeyOf(payload);
  // Frozen: verifiers hand the same claims to every request that presents the token.
  const claims: AuthClaims = Object.freeze({
    userId: sub,
    role,
    jti,
    issuedAt: iat,
    expiresAt: exp,
    authTime,
    ...(apiKey && { apiKey: Object.freeze(apiKey) }),
  });
  return { claims, kid, key };
}

const isScope = (scope: unknown): scope is ApiKeyScope =>
  (API_KEY_SCOPES as readonly unknown[]).includes(scope);

/** The API key a token was issued for (claims `api_key_id` and `scopes`); a malformed one refuses the token. */
function apiKeyOf(payload: JWTPayload): AuthClaims['apiKey'] {
  const { api_key_id: id, scopes } = payload;
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !id) throw new InvalidTokenError('malformed API key claims');
  if (scopes === undefined) return { id, scopes: null };
  if (!Array.isArray(scopes) || !scopes.every(isScope))
    throw new InvalidTokenError('malformed API key scopes');
  return { id, scopes: Object.freeze([...scopes]) as ApiKeyScope[] };
}

/** The token's `kid`, read before any key is looked up: the header must say ES256 and name a key. */
function pinnedKeyId(token: string): string {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new InvalidTokenError('malformed token');
  }
  if (header.alg !== TOKEN_ALGORITHM || typeof header.kid !== 'string' || !header.kid) {
    throw new InvalidTokenError('malformed token');
  }
  return header.kid;
}

/** What jose refused becomes a 401; a key set that cannot be had stays a 503. */
function asTokenError(error: unknown): unknown {
  if (error instanceof InvalidTokenError || error instanceof AppError) return error;
  if (error instanceof jose.JWTExpired) return new InvalidTokenError('token expired');
  if (error instanceof jose.JWSSignatureVerificationFailed) return new InvalidTokenError('invalid signature');
  if (error instanceof jose.JOSEError) return new InvalidTokenError(error.message);
  return error;
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
 * Tokens whose signature was verified, by token string, until they expire: a client sends the same token with
 * every request, and an ES256 check costs far more than a look-up. Only the signature is remembered; revocation is
 * checked on every use. When full, the oldest entry goes; a token pushed out is simply verified again.
 */
function createVerifiedTokens(capacity: number, now: () => number) {
  const entries = new Map<string, SignedClaims>();
  return {
    /** The remembered verification, unless the token has expired; the caller still checks its key. */
    get(token: string): SignedClaims | undefined {
      const entry = entries.get(token);
      if (!entry || now() < entry.claims.expiresAt) return entry;
      entries.delete(token);
      return undefined;
    },
    forget(token: string): void {
      entries.delete(token);
    },
    add(token: string, verified: SignedClaims): void {
      if (entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(token, verified);
    },
  };
}

/**
 * Verifies tokens with jose against a key set (identity's JWKS, or identity's own keys): pinned algorithm, issuer
 * and audience, expiry, then the revocation list. A token's verified signature is remembered until it expires, but
 * only while the key set still holds the very key that verified it: every fetch of the set makes new keys, so after
 * one the token is verified again, and a token whose key was removed is refused exactly as it would be uncached.
 */
export function createTokenVerifier(keys: TokenKeys, options: TokenVerifierOptions): TokenVerifier {
  const verified = createVerifiedTokens(options.cacheSize ?? 10_000, options.now ?? epochSeconds);
  return {
    async verify(token) {
      refuseWhileIncomplete(options);
      const known = verified.get(token);
      if (known) {
        if ((await currentKey(keys, known.kid)) === known.key) {
          return refuseRevoked(known.claims, options.revocations);
        }
        verified.forget(token);
      }
      const signed = await verifySignature(token, keys, options);
      verified.add(token, signed);
      return refuseRevoked(signed.claims, options.revocations);
    },
  };
}

/** A token's `jti` and `exp`, read without verifying it: only ever used to deny the token, never to trust it. */
export function unverifiedTokenId(token: string | null): { jti: string; expires_at: number } | null {
  if (!token) return null;
  let payload: JWTPayload;
  try {
    payload = decodeJwt(token);
  } catch {
    return null;
  }
  const { jti, exp } = payload;
  return typeof jti === 'string' && Number.isInteger(exp) ? { jti, expires_at: exp as number } : null;
}

export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match ? (match[1] as string) : null;
}

/** Whether an error is a token refused as invalid, expired or revoked (a 401), rather than a failure to judge it. */
export function isInvalidToken(error: unknown): boolean {
  return error instanceof InvalidTokenError;
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
      if (error instanceof InvalidTokenError) {
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
      // A cutoff that spares one session is a password change ending the others: an API key is no session and
      // outlives it (docs/adr/0121), as a disable or a deletion (cutoffs sparing none) it does not.
      if (claims.apiKey) return false;
      for (const [spared, cutoff] of cutoffs.sparing) {
        if (spared !== claims.jti && claims.issuedAt < cutoff.before) return true;
      }
      return false;
    },
  };
}
