import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

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
