import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { TOKEN_ALGORITHM } from '@payments/service-kit';

export interface VerificationKey {
  kid: string;
  publicKey: KeyObject;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

export interface SigningKeys {
  current: SigningKey;
  /** Retired keys whose tokens may still be in use; verified, never signed with. */
  previous: VerificationKey[];
}

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: typeof TOKEN_ALGORITHM;
  use: 'sig';
}

/** ES256 needs an EC key on P-256; anything else is a configuration mistake. */
export function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

/** RFC 7638: SHA-256 over the required members in lexicographic order, base64url. */
export function jwkThumbprint(publicKey: KeyObject): string {
  const { crv, kty, x, y } = publicKey.export({ format: 'jwk' });
  return createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
}

export function toVerificationKey(publicKey: KeyObject): VerificationKey {
  return { kid: jwkThumbprint(publicKey), publicKey };
}

export function toSigningKey(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  return { ...toVerificationKey(publicKey), privateKey };
}

export function verificationKeys(keys: SigningKeys): VerificationKey[] {
  return [keys.current, ...keys.previous.filter((key) => key.kid !== keys.current.kid)];
}

export function toJwks(keys: SigningKeys): { keys: PublicJwk[] } {
  return {
    keys: verificationKeys(keys).map(({ kid, publicKey }) => ({
      ...publicKey.export({ format: 'jwk' }),
      kid,
      alg: TOKEN_ALGORITHM,
      use: 'sig',
    })),
  };
}
