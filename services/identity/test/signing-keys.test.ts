import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { ConfigError, createLogger, createRevocationList, generateTokenKeyPair } from '@payments/service-kit';
import { developmentKeyPath, loadSigningKeys } from '../src/data/signing-key-files.js';
import { ARGON2_OPTIONS, createPasswordHasher } from '../src/domain/password-hasher.js';
import { toJwks } from '../src/domain/signing-keys.js';
import { createTokenIssuer } from '../src/domain/token-issuer.js';

const logger = createLogger('test', 'silent');
const pemOf = (
  key: { export(options: { format: 'pem'; type: 'pkcs8' | 'spki' }): string | Buffer },
  type: 'pkcs8' | 'spki',
) => key.export({ format: 'pem', type }).toString();

describe('identity: signing keys and password hashing', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'identity-keys-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const config = (env: Record<string, string> = {}) => ({
    NODE_ENV: 'development' as const,
    DATA_DIR: dataDir,
    ...env,
  });

  it('generates a development key once, private to its owner, and reuses it on the next start', async () => {
    const first = await loadSigningKeys(config(), logger);
    const second = await loadSigningKeys(config(), logger);
    expect(second.current.kid).to.equal(first.current.kid);
    const { mode } = await stat(developmentKeyPath(dataDir));
    expect(mode & 0o777).to.equal(0o600);
  });

  it('agrees on one development key when several processes start at once', async () => {
    const loaded = await Promise.all(Array.from({ length: 5 }, () => loadSigningKeys(config(), logger)));
    expect(new Set(loaded.map((keys) => keys.current.kid)).size).to.equal(1);
  });

  it('refuses to start in production without a configured key, naming JWT_PRIVATE_KEY', async () => {
    const error = await loadSigningKeys({ ...config(), NODE_ENV: 'production' }, logger).catch(
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.include('JWT_PRIVATE_KEY');
  });

  it('uses JWT_PRIVATE_KEY given on one line, with the RFC 7638 thumbprint as kid', async () => {
    const { privateKey, publicKey } = generateTokenKeyPair();
    const oneLine = pemOf(privateKey, 'pkcs8').replaceAll('\n', '\\n');
    const keys = await loadSigningKeys(config({ JWT_PRIVATE_KEY: oneLine }), logger);
    const { x, y } = publicKey.export({ format: 'jwk' });
    const canonical = `{"crv":"P-256","kty":"EC","x":"${x}","y":"${y}"}`;
    expect(keys.current.kid).to.equal(createHash('sha256').update(canonical).digest('base64url'));
  });

  it('refuses a key that cannot sign ES256', async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const file = join(dataDir, 'rsa.pem');
    await writeFile(file, privateKey);
    const error = await loadSigningKeys(config({ JWT_PRIVATE_KEY_FILE: file }), logger).catch(
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.include('JWT_PRIVATE_KEY_FILE');
  });

  it('publishes previous keys beside the current one and still accepts their tokens', async () => {
    const retired = generateTokenKeyPair();
    const file = join(dataDir, 'previous.pem');
    await writeFile(file, pemOf(retired.publicKey, 'spki'));
    const keys = await loadSigningKeys(config({ JWT_PREVIOUS_PUBLIC_KEYS_FILE: file }), logger);
    const kids = toJwks(keys).keys.map((key) => key.kid);
    expect(kids).to.have.length(2);
    expect(kids[0]).to.equal(keys.current.kid);

    const issuer = createTokenIssuer({
      keys,
      issuer: 'payments-identity',
      audience: 'payments-api',
      ttlSeconds: 900,
      sessionMaxSeconds: 43_200,
      revocations: createRevocationList(),
    });
    const userId = randomUUID();
    const oldToken = jwt.sign({ sub: userId, role: 'user', jti: randomUUID() }, retired.privateKey, {
      algorithm: 'ES256',
      keyid: kids[1],
      issuer: 'payments-identity',
      audience: 'payments-api',
      expiresIn: 60,
    });
    expect((await issuer.verifier.verify(oldToken)).userId).to.equal(userId);
  });

  it('hashes passwords with argon2id at OWASP cost and verifies them', async () => {
    expect(ARGON2_OPTIONS).to.include({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    const hasher = await createPasswordHasher();
    const hash = await hasher.hash('correct horse battery');
    expect(hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.verify(hash, 'correct horse battery')).to.equal(true);
    expect(await hasher.verify(hash, 'wrong horse battery')).to.equal(false);
  });
});
