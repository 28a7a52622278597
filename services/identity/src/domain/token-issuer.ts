import { randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  TOKEN_ALGORITHM,
  verifyWithKeys,
  type RevocationList,
  type TokenVerifier,
} from '@payments/service-kit';
import type { User } from './user.js';
import { verificationKeys, type SigningKeys } from './signing-keys.js';

export interface IssuedToken {
  token: string;
  jti: string;
  issuedAt: number;
  expiresAt: number;
  expiresIn: number;
}

export interface TokenIssuer {
  issue(user: Pick<User, 'id' | 'role' | 'tokensValidFrom'>): IssuedToken;
  verifier: TokenVerifier;
}

export interface TokenIssuerOptions {
  keys: SigningKeys;
  issuer: string;
  audience: string;
  ttlSeconds: number;
  revocations: RevocationList;
  now?: () => number;
}

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { current } = options.keys;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const publicKeys = new Map<string, KeyObject>(
    verificationKeys(options.keys).map(({ kid, publicKey }) => [kid, publicKey]),
  );
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.audience,
    revocations: options.revocations,
  };
  return {
    issue(user) {
      // A revocation covers tokens issued before its second; a token issued later in that second starts after it.
      const issuedAt = Math.max(now(), user.tokensValidFrom);
      const jti = randomUUID();
      const token = jwt.sign({ sub: user.id, role: user.role, jti, iat: issuedAt }, current.privateKey, {
        algorithm: TOKEN_ALGORITHM,
        keyid: current.kid,
        issuer: options.issuer,
        audience: options.audience,
        expiresIn: options.ttlSeconds,
      });
      return {
        token,
        jti,
        issuedAt,
        expiresAt: issuedAt + options.ttlSeconds,
        expiresIn: options.ttlSeconds,
      };
    },
    verifier: {
      async verify(token) {
        return verifyWithKeys(token, (kid) => publicKeys.get(kid), verifyOptions);
      },
    },
  };
}
