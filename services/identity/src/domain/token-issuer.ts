import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  TOKEN_ALGORITHM,
  createTokenVerifier,
  localTokenKeys,
  type RevocationList,
  type TokenVerifier,
} from '@payments/service-kit';
import { ADMIN_API_KEY_SCOPES, apiKeyTokenId, type ApiKeyScope } from '@payments/contracts';
import type { User } from './user.js';
import { toJwks, type SigningKeys } from './signing-keys.js';

export interface IssuedToken {
  token: string;
  jti: string;
  issuedAt: number;
  expiresAt: number;
  expiresIn: number;
}

export interface TokenIssuer {
  /**
   * A token for the user, issued at `at.now` (else this process's clock): the database's clock under the user's row
   * lock, the clock the user's revocations are cut by. `at.authTime` is when the session began (a refresh carries
   * its token's on; a login starts a new one); the token never outlives `authTime` + the session's maximum.
   * Undefined when that moment has passed.
   */
  issue(
    user: Pick<User, 'id' | 'role' | 'tokensValidFrom'>,
    at?: { now?: number; authTime?: number },
  ): IssuedToken | undefined;
  /**
   * The short-lived token the gateway exchanges an API key for (docs/adr/0121): `jti` names the key, so revoking
   * the key revokes every such token; `role` is admin only for an admin's secret key or one with an admin scope.
   * Never past the key's own expiry; undefined when that has come.
   */
  issueForKey(
    user: Pick<User, 'id' | 'role' | 'tokensValidFrom'>,
    key: { id: string; scopes: ApiKeyScope[] | null; expiresAt: Date | null },
    ttlSeconds: number,
  ): IssuedToken | undefined;
  verifier: TokenVerifier;
}

export interface TokenIssuerOptions {
  keys: SigningKeys;
  issuer: string;
  audience: string;
  ttlSeconds: number;
  sessionMaxSeconds: number;
  revocations: RevocationList;
  now?: () => number;
}

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { current } = options.keys;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  // Exactly the keys this process serves in its JWKS: they change only with a restart, so nothing to refresh.
  const verifier = createTokenVerifier(localTokenKeys(toJwks(options.keys)), {
    issuer: options.issuer,
    audience: options.audience,
    revocations: options.revocations,
  });
  /** Signs claims with the current key, for this issuer and audience. */
  const sign = (claims: object) =>
    jwt.sign(claims, current.privateKey, {
      algorithm: TOKEN_ALGORITHM,
      keyid: current.kid,
      issuer: options.issuer,
      audience: options.audience,
    });
  return {
    issue(user, at = {}) {
      // Never before tokensValidFrom, which the last revocation of the user moved past every token before it.
      const issuedAt = Math.max(at.now ?? now(), user.tokensValidFrom);
      const sessionStart = at.authTime ?? issuedAt;
      const expiresAt = Math.min(issuedAt + options.ttlSeconds, sessionStart + options.sessionMaxSeconds);
      if (expiresAt <= issuedAt) return undefined;
      const jti = randomUUID();
      const token = sign({
        sub: user.id,
        role: user.role,
        jti,
        iat: issuedAt,
        exp: expiresAt,
        auth_time: sessionStart,
      });
      return { token, jti, issuedAt, expiresAt, expiresIn: expiresAt - issuedAt };
    },
    issueForKey(user, key, ttlSeconds) {
      const issuedAt = Math.max(now(), user.tokensValidFrom);
      const keyEnds = key.expiresAt ? Math.floor(key.expiresAt.getTime() / 1000) : Infinity;
      const expiresAt = Math.min(issuedAt + ttlSeconds, keyEnds);
      if (expiresAt <= issuedAt) return undefined;
      // Admin only for a secret key, or one with nothing but admin scopes (a mixed key is refused when made).
      const adminScoped =
        key.scopes === null || key.scopes.every((scope) => ADMIN_API_KEY_SCOPES.includes(scope));
      const role = user.role === 'admin' && adminScoped ? 'admin' : 'user';
      const jti = apiKeyTokenId(key.id);
      const token = sign({
        sub: user.id,
        role,
        jti,
        iat: issuedAt,
        exp: expiresAt,
        auth_time: issuedAt,
        api_key_id: key.id,
        ...(key.scopes && { scopes: key.scopes }),
      });
      return { token, jti, issuedAt, expiresAt, expiresIn: expiresAt - issuedAt };
    },
    verifier,
  };
}
