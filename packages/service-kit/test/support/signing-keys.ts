import { createServer, type Server } from 'node:http';
import { randomUUID, type KeyObject } from 'node:crypto';
import { TOKEN_ALGORITHM } from '@payments/contracts';
import { generateTokenKeyPair } from '@payments/service-kit';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: object;
}

/** A new ES256 key as identity makes one: the private half to sign with, the public half as a JWK. */
export function newSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateTokenKeyPair();
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: TOKEN_ALGORITHM } };
}

/**
 * Identity's JWKS as the test changes it, as identity's does when it rotates or retires a key. Each answer holds
 * the set served when its request arrived, `delayMs` later; `status` other than 200 stands for an identity that
 * cannot answer.
 */
export async function startJwks(initial: SigningKey[]) {
  const state = { served: initial, delayMs: 0, status: 200, requests: 0 };
  const server: Server = createServer((_req, res) => {
    state.requests += 1;
    const body = JSON.stringify({ keys: state.served.map((key) => key.jwk) });
    const status = state.status;
    setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(body), state.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    state,
    identityUrl: `http://127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    serve: (keys: SigningKey[]) => void (state.served = keys),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
