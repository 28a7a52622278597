import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { TOKEN_ALGORITHM } from '@payments/contracts';
import {
  createLogger,
  createRevocationList,
  createTokenVerifier,
  remoteTokenKeys,
  type RevocationList,
  type TokenVerifier,
} from '@payments/service-kit';
import { newSigningKey, startJwks, type SigningKey } from './support/signing-keys.js';

const ISSUER = 'payments-identity';
const AUDIENCE = 'payments-api';

const sign = (key: SigningKey, claims: { sub: string; jti?: string; iat: number; exp: number }) =>
  jwt.sign({ role: 'user', jti: randomUUID(), ...claims }, key.privateKey, {
    algorithm: TOKEN_ALGORITHM,
    keyid: key.kid,
    issuer: ISSUER,
    audience: AUDIENCE,
  });

describe('token verifier cache', () => {
  const start = Math.floor(Date.now() / 1000);
  let clock: number;
  let key: SigningKey;
  let jwks: Awaited<ReturnType<typeof startJwks>>;
  let revocations: RevocationList;

  const verifierFor = (extra: { cacheSize?: number } = {}): TokenVerifier =>
    createTokenVerifier(
      remoteTokenKeys({
        jwksUrl: jwks.url,
        maxAgeMs: 60_000,
        minRefetchMs: 0,
        logger: createLogger('auth-test', 'silent'),
      }),
      { issuer: ISSUER, audience: AUDIENCE, revocations, now: () => clock, ...extra },
    );
  const tokenFor = (sub: string, signer = key) => sign(signer, { sub, iat: start - 10, exp: start + 900 });

  beforeEach(async () => {
    clock = start;
    key = newSigningKey();
    jwks = await startJwks([key]);
    revocations = createRevocationList(() => clock);
  });

  afterEach(() => jwks.close());

  it('answers a token it verified before from the cache', async () => {
    const verifier = verifierFor();
    const token = tokenFor('u1');
    const first = await verifier.verify(token);
    expect(first).to.include({ userId: 'u1', role: 'user', expiresAt: start + 900 });
    expect(await verifier.verify(token)).to.equal(first);
    expect(Object.isFrozen(first)).to.equal(true);
  });

  it('refuses a cached token once it expires', async () => {
    const verifier = verifierFor();
    const token = tokenFor('u1');
    await verifier.verify(token);
    clock = start + 899;
    expect((await verifier.verify(token)).userId).to.equal('u1');
    clock = start + 900;
    await expectRefused(verifier.verify(token), /expired/);
  });

  it('refuses a cached token as soon as it is revoked', async () => {
    const verifier = verifierFor();
    const token = tokenFor('u1');
    const claims = await verifier.verify(token);
    revocations.add({ jti: claims.jti, expires_at: claims.expiresAt });
    await expectRefused(verifier.verify(token), /revoked/);
  });

  it("refuses a user's cached sessions on a user-wide revocation, except the one it names", async () => {
    const verifier = verifierFor();
    const kept = tokenFor('u1');
    const other = tokenFor('u1');
    const keptClaims = await verifier.verify(kept);
    await verifier.verify(other);
    revocations.add({
      user_id: 'u1',
      issued_before: start,
      except_jti: keptClaims.jti,
      expires_at: start + 900,
    });
    expect(await verifier.verify(kept)).to.equal(keptClaims);
    await expectRefused(verifier.verify(other), /revoked/);
  });

  it('stops trusting a cached token once its key leaves the JWKS', async () => {
    const verifier = verifierFor();
    const token = tokenFor('u1');
    await verifier.verify(token);
    const next = newSigningKey();
    jwks.serve([next]);
    await refetchKeys(verifier, tokenFor('u2', next));
    await expectRefused(verifier.verify(token), /unknown key/);
  });

  it('verifies a token again after a refetch that keeps its key', async () => {
    const verifier = verifierFor();
    const token = tokenFor('u1');
    const first = await verifier.verify(token);
    const next = newSigningKey();
    jwks.serve([key, next]);
    await refetchKeys(verifier, tokenFor('u2', next));
    const again = await verifier.verify(token);
    expect(again).to.deep.equal(first);
    expect(again).to.not.equal(first);
  });

  it('remembers no more tokens than its size', async () => {
    const verifier = verifierFor({ cacheSize: 2 });
    const [a, b, c] = [tokenFor('a'), tokenFor('b'), tokenFor('c')];
    const first = await verifier.verify(a);
    const second = await verifier.verify(b);
    await verifier.verify(c);
    expect(await verifier.verify(b)).to.equal(second);
    expect(await verifier.verify(a)).to.not.equal(first);
  });

  it('caches nothing for a token that fails verification', async () => {
    const verifier = verifierFor();
    const forged = sign(newSigningKey(), { sub: 'u1', iat: start - 10, exp: start + 900 });
    const tampered = `${tokenFor('u1').slice(0, -4)}AAAA`;
    for (const token of [forged, forged, tampered, tampered]) {
      await expectRefused(verifier.verify(token), /unknown key|invalid signature/);
    }
  });
});

/** A token signed with a key the verifier does not know yet makes it refetch the key set. */
async function refetchKeys(verifier: TokenVerifier, tokenWithNewKey: string): Promise<void> {
  // Even with minRefetchMs 0, a refetch needs a millisecond to have passed since the last one.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await verifier.verify(tokenWithNewKey);
}

async function expectRefused(verification: Promise<unknown>, reason: RegExp): Promise<void> {
  const outcome = await verification.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome, 'the token was accepted').to.be.instanceOf(Error);
  expect((outcome as Error).message).to.match(reason);
}
