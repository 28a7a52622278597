import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { createEvent, TOKEN_ALGORITHM } from '@payments/contracts';
import {
  AppError,
  createLogger,
  createMemoryBus,
  createRevocationList,
  createShutdown,
  createTokenVerifier,
  identityTokenVerifier,
  remoteTokenKeys,
  type TokenKeys,
  type TokenVerifier,
} from '@payments/service-kit';
import { newSigningKey, startJwks, type SigningKey } from './support/signing-keys.js';

const ISSUER = 'payments-identity';
const AUDIENCE = 'payments-api';
const logger = createLogger('token-keys-test', 'silent');

const tokenOf = (key: SigningKey) =>
  jwt.sign({ sub: randomUUID(), role: 'user', jti: randomUUID() }, key.privateKey, {
    algorithm: TOKEN_ALGORITHM,
    keyid: key.kid,
    issuer: ISSUER,
    audience: AUDIENCE,
    expiresIn: 900,
  });

async function refusal(verification: Promise<unknown>): Promise<Error> {
  const outcome = await verification.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome, 'the token was accepted').to.be.instanceOf(Error);
  return outcome as Error;
}

describe('token keys from the JWKS', () => {
  let oldKey: SigningKey;
  let newKey: SigningKey;
  let jwks: Awaited<ReturnType<typeof startJwks>>;

  beforeEach(async () => {
    oldKey = newSigningKey();
    newKey = newSigningKey();
    jwks = await startJwks([oldKey]);
  });

  afterEach(() => jwks.close());

  const verifierOf = (keys: TokenKeys): TokenVerifier =>
    createTokenVerifier(keys, { issuer: ISSUER, audience: AUDIENCE });

  it('refuses a token of a removed key once the key set is older than its maximum age, unprompted', async () => {
    const verifier = verifierOf(remoteTokenKeys({ jwksUrl: jwks.url, maxAgeMs: 300, logger }));
    const token = tokenOf(oldKey);
    await verifier.verify(token);
    jwks.state.served = [newKey];
    await delay(350);
    expect((await refusal(verifier.verify(token))).message).to.match(/unknown key/);
    expect((await verifier.verify(tokenOf(newKey))).role).to.equal('user');
  });

  it('refuses a token of a removed key at once after a refresh, however young the key set', async () => {
    const keys = remoteTokenKeys({ jwksUrl: jwks.url, maxAgeMs: 3_600_000, logger });
    const verifier = verifierOf(keys);
    const token = tokenOf(oldKey);
    await verifier.verify(token);
    jwks.state.served = [newKey];
    expect((await verifier.verify(token)).role, 'still the cached set').to.equal('user');
    await keys.refresh();
    expect((await refusal(verifier.verify(token))).message).to.match(/unknown key/);
  });

  it('refreshes with a fetch of its own when one that began before the change is under way', async () => {
    const keys = remoteTokenKeys({ jwksUrl: jwks.url, maxAgeMs: 3_600_000, minRefetchMs: 0, logger });
    const verifier = verifierOf(keys);
    const token = tokenOf(oldKey);
    await verifier.verify(token);
    jwks.state.delayMs = 200;
    // An unknown kid starts a fetch that will answer with the set as it was.
    const early = verifier.verify(tokenOf(newSigningKey())).catch(() => undefined);
    await delay(50);
    jwks.state.served = [newKey];
    await keys.refresh();
    await early;
    expect((await refusal(verifier.verify(token))).message).to.match(/unknown key/);
  });

  it('answers 503 while its key set is too old and identity cannot give another, then recovers', async () => {
    const verifier = verifierOf(remoteTokenKeys({ jwksUrl: jwks.url, maxAgeMs: 200, logger }));
    const token = tokenOf(oldKey);
    await verifier.verify(token);
    jwks.state.status = 503;
    await delay(250);
    const error = await refusal(verifier.verify(token));
    expect(error).to.be.instanceOf(AppError);
    expect(error).to.include({ code: 'SERVICE_UNAVAILABLE' });
    expect((error as AppError).headers).to.have.property('Retry-After');
    jwks.state.status = 200;
    expect((await verifier.verify(token)).role).to.equal('user');
  });

  it('fetches no key set for a token that is not even well-formed', async () => {
    const verifier = verifierOf(remoteTokenKeys({ jwksUrl: jwks.url, maxAgeMs: 60_000, logger }));
    expect((await refusal(verifier.verify('not.a.token'))).message).to.match(/malformed/);
    const unsigned = `${Buffer.from('{"alg":"none","kid":"x"}').toString('base64url')}.e30.`;
    expect((await refusal(verifier.verify(unsigned))).message).to.match(/malformed/);
    expect(jwks.state.requests).to.equal(0);
  });

  it("refuses a removed key's token once identity announces SigningKeysChanged on the bus", async () => {
    const bus = createMemoryBus(logger);
    const shutdown = createShutdown(logger);
    try {
      const verifier = await identityTokenVerifier(
        {
          JWKS_URL: jwks.url,
          JWKS_REFRESH_SECONDS: 3600,
          IDENTITY_URL: jwks.identityUrl,
          JWT_ISSUER: ISSUER,
          JWT_AUDIENCE: AUDIENCE,
        },
        {
          followed: { revocations: createRevocationList(), sync: { isLoaded: () => true } },
          bus,
          shutdown,
          logger,
        },
      );
      const token = tokenOf(oldKey);
      await verifier.verify(token);
      jwks.state.served = [newKey];
      await bus.publish(
        createEvent(
          'SigningKeysChanged',
          { kids: [newKey.kid] },
          { id: randomUUID(), correlationId: 'test' },
        ),
      );
      const deadline = Date.now() + 2000;
      while (
        (await verifier.verify(token).then(
          () => true,
          () => false,
        )) &&
        Date.now() < deadline
      ) {
        await delay(20);
      }
      expect((await refusal(verifier.verify(token))).message).to.match(/unknown key/);
      expect((await verifier.verify(tokenOf(newKey))).role).to.equal('user');
    } finally {
      await shutdown.run();
      await bus.close();
    }
  });
});
