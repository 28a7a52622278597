import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type RemoteJWKSet,
} from 'jose';
import type { Logger } from './logger.js';

/**
 * A fresh P-256 key pair for ES256 tokens, as key objects that share nothing with the job that generated them.
 *
 * Node 20 can deadlock on a key straight from `generateKeyPair(Sync)`: exporting or using it holds the key's
 * mutex, and a garbage collection in the middle may free the finished generation job, whose destructor takes that
 * same mutex. The process then hangs for good (seen as a test worker stuck in `ExportJWKEcKey` → `~KeyGenJob`).
 * The job encodes the keys while it is still referenced; parsing them again gives keys with a mutex of their own.
 */
export function generateTokenKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  const { privateKey: pem } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

export type TokenKey = Awaited<ReturnType<RemoteJWKSet>>;

/** The public keys tokens are verified with, as jose resolves them from a token's header. */
export interface TokenKeys {
  /** The key for a token's `alg` and `kid`; jose's JWKSNoMatchingKey when the set has none. */
  keyFor(header: JWSHeaderParameters): Promise<TokenKey>;
  /** Fetches the set again now, after a fetch already under way (identity said its keys changed). */
  refresh(): Promise<void>;
}

/** A fixed key set: identity's own, which changes only when the process restarts with other keys. */
export function localTokenKeys(jwks: JSONWebKeySet): TokenKeys {
  return { keyFor: createLocalJWKSet(jwks), refresh: async () => undefined };
}

export interface RemoteTokenKeysOptions {
  jwksUrl: string;
  /** No key set older than this verifies a token: the next token waits for a fresh one (the bound on a removed key). */
  maxAgeMs: number;
  /** A token with an unknown `kid` fetches the set again at most this often, so invented kids cost nothing. */
  minRefetchMs?: number;
  timeoutMs?: number;
  logger: Logger;
}

/** Identity's JWKS over HTTP, through jose: fetched on first use, again once `maxAgeMs` old, and on `refresh()`. */
export function remoteTokenKeys(options: RemoteTokenKeysOptions): TokenKeys {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl), {
    cacheMaxAge: options.maxAgeMs,
    cooldownDuration: options.minRefetchMs ?? 5000,
    timeoutDuration: options.timeoutMs ?? 3000,
  });
  // Said once when fetching starts to fail, and once when it works again, not for every token in between.
  let failing = false;
  return {
    async keyFor(header) {
      try {
        const key = await jwks(header);
        if (failing) options.logger.info('the token keys can be fetched from identity again');
        failing = false;
        return key;
      } catch (error) {
        // No such key: the set was had, and lacks it.
        const had =
          error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys;
        if (!had && !failing) {
          options.logger.warn({ err: error }, 'cannot fetch the token keys from identity; tokens get 503');
        }
        failing = !had;
        throw error;
      }
    },
    async refresh() {
      // Never fetched: the first token fetches it anyway.
      if (jwks.jwks() === undefined) return;
      // jose joins a fetch under way, which may have started before the change: wait it out, then fetch anew.
      if (jwks.reloading) await jwks.reload().catch(() => undefined);
      try {
        await jwks.reload();
      } catch (error) {
        options.logger.warn({ err: error }, 'could not fetch the token keys again; the next token will try');
      }
    },
  };
}
