import { createServer, type Server } from 'node:http';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import jwt from 'jsonwebtoken';
import { TOKEN_ALGORITHM, type Role } from '@payments/contracts';

export interface TestIssuer {
  jwksUrl: string;
  /** Stands in for identity's base URL: it serves the JWKS and an empty list of revocations in force. */
  identityUrl: string;
  issuer: string;
  audience: string;
  /** A token as identity would issue it; override claims to forge bad ones. */
  issue(claims: { sub: string; role?: Role; expiresIn?: number; jti?: string }): string;
  /** Signs with a new key from now on and serves only that one, as identity restarted without the old key does. */
  rotate(): void;
  close(): Promise<void>;
}

/**
 * A stand-in for identity's token issuing, for component tests of other services: an ES256 key, a JWKS
 * endpoint on a free port, and tokens with the same claims identity puts in them.
 */
export async function startTestIssuer(
  issuer = 'payments-identity',
  audience = 'payments-api',
): Promise<TestIssuer> {
  let key = newKey();
  const server: Server = createServer((req, res) => {
    const body = req.url === '/internal/revocations' ? '{"data":[]}' : key.jwks;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    identityUrl: `http://127.0.0.1:${port}`,
    issuer,
    audience,
    issue: ({ sub, role = 'user', expiresIn = 900, jti = randomUUID() }) =>
      signToken(key.privateKey, key.kid, { sub, role, jti }, { issuer, audience, expiresIn }),
    rotate: () => {
      key = newKey();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function newKey(): { privateKey: KeyObject; kid: string; jwks: string } {
  // Parsed from PEM, as service-kit's generateTokenKeyPair does (testkit does not depend on it): a key straight
  // from generateKeyPairSync can deadlock Node 20 when a garbage collection frees its job during an export.
  const pem = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  const kid = randomUUID();
  const jwks = JSON.stringify({
    keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: TOKEN_ALGORITHM, use: 'sig' }],
  });
  return { privateKey, kid, jwks };
}

function signToken(
  key: KeyObject,
  kid: string,
  payload: Record<string, unknown>,
  options: { issuer: string; audience: string; expiresIn: number },
): string {
  return jwt.sign(payload, key, { algorithm: TOKEN_ALGORITHM, keyid: kid, ...options });
}
