import { Type } from '@sinclair/typebox';
import { createTokenVerifier, type RevocationList, type TokenVerifier } from './auth.js';
import type { EventBus } from './bus/event-bus.js';
import { Url } from './config.js';
import type { Shutdown } from './lifecycle.js';
import type { Logger } from './logger.js';
import { TokenConfig } from './runtime.js';
import { followIdentityRevocations } from './revocation-loader.js';
import { remoteTokenKeys } from './token-keys.js';

/** The configuration of every process that verifies identity's tokens by its JWKS. */
export const TokenKeysConfig = {
  JWKS_URL: Type.Optional(
    Url({ description: "The token keys; unset, identity's `/.well-known/jwks.json` (from IDENTITY_URL)" }),
  ),
  JWKS_REFRESH_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description:
      "How old identity's token keys may get here: a key identity removed verifies no token after this, even " +
      'when its SigningKeysChanged event is lost; identity unreachable for longer, tokens are answered 503',
  }),
};

/** What a service that verifies identity's tokens reads; `identityUrlDescription` says what else it asks identity. */
export const IdentityTokensConfig = (identityUrlDescription: string) => ({
  ...TokenConfig,
  IDENTITY_URL: Url({ default: 'http://127.0.0.1:3001', description: identityUrlDescription }),
  ...TokenKeysConfig,
});

export interface IdentityTokenVerifierConfig {
  JWKS_URL?: string;
  JWKS_REFRESH_SECONDS: number;
  IDENTITY_URL: string;
  JWT_ISSUER: string;
  JWT_AUDIENCE: string;
}

export interface IdentityTokenVerifierDeps {
  /** What `followIdentityRevocations` keeps: tokens are refused with 503 until the revocations have loaded. */
  followed: { revocations: RevocationList; sync: { isLoaded(): boolean } };
  /** The SigningKeysChanged broadcast; without a bus, the keys are fetched again by age alone. */
  bus: EventBus | null;
  shutdown: Shutdown;
  logger: Logger;
}

/**
 * The verifier of the user tokens identity signs: its keys from JWKS_URL (else identity's well-known path), never
 * older than JWKS_REFRESH_SECONDS and fetched again at once when identity announces SigningKeysChanged (and after
 * every re-made subscription, since an announcement may have been missed); its issuer and audience; the revocations
 * followed.
 */
export async function identityTokenVerifier(
  config: IdentityTokenVerifierConfig,
  deps: IdentityTokenVerifierDeps,
): Promise<TokenVerifier> {
  const { bus, shutdown, logger } = deps;
  const keys = remoteTokenKeys({
    jwksUrl: config.JWKS_URL ?? new URL('/.well-known/jwks.json', config.IDENTITY_URL).toString(),
    maxAgeMs: config.JWKS_REFRESH_SECONDS * 1000,
    logger,
  });
  if (bus) {
    const feed = await bus.broadcast(
      'signing-keys',
      { SigningKeysChanged: () => keys.refresh() },
      { onSubscribed: () => void keys.refresh() },
    );
    shutdown.add('signing key feed', () => feed.stop());
  }
  return createTokenVerifier(keys, {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    revocations: deps.followed.revocations,
    revocationsLoaded: deps.followed.sync.isLoaded,
  });
}

export interface IdentityTokensDeps {
  serviceToken: string;
  /** The TokenRevoked and SigningKeysChanged broadcasts; without a bus, `reloadEveryMs` is how revocations arrive. */
  bus: EventBus | null;
  reloadEveryMs?: number;
  shutdown: Shutdown;
  logger: Logger;
}

/** What every process that checks identity's tokens starts: the revocations it follows and the verifier over them. */
export async function followIdentityTokens(
  config: IdentityTokenVerifierConfig,
  deps: IdentityTokensDeps,
): Promise<{ verifier: TokenVerifier; followed: IdentityTokenVerifierDeps['followed'] }> {
  const { bus, shutdown, logger } = deps;
  const followed = await followIdentityRevocations({
    identityUrl: config.IDENTITY_URL,
    serviceToken: deps.serviceToken,
    logger,
    shutdown,
    bus,
    reloadEveryMs: deps.reloadEveryMs,
  });
  const verifier = await identityTokenVerifier(config, { followed, bus, shutdown, logger });
  return { verifier, followed };
}
