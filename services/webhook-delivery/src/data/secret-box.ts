import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Used when no key is configured outside production; public, so refused beyond loopback. */
export const DEVELOPMENT_ENDPOINT_SECRETS_KEY = 'endpoint_secrets_development_only_do_not_use_in_production';

const PREFIX = 'enc:v1:';
const TAG_BYTES = 16;

/**
 * Endpoints' signing secrets at rest: AES-256-GCM under a key from configuration, so a copy of the database
 * alone cannot sign as us. The first key seals; every key opens. Retiring a key: put the new one first, re-seal
 * every stored secret under it (`reseal-secrets`), then drop the old one. Values stored before encryption open as
 * they are.
 */
export interface SecretBox {
  seal(secret: string): string;
  /** Throws UnknownSecretKeyError for a value sealed under a key that is not configured. */
  open(stored: string): string;
  /** The value sealed under the first key; null when it is already. */
  reseal(stored: string): string | null;
}

/** A stored secret sealed under a key the configuration no longer holds (dropped before re-sealing). */
export class UnknownSecretKeyError extends Error {
  override name = 'UnknownSecretKeyError';
  constructor(readonly keyId: string) {
    super(
      `sealed under key ${keyId}, which WEBHOOK_ENDPOINT_SECRETS_KEYS no longer holds ` +
        '(restore that key, or rotate the secret)',
    );
  }
}

interface Key {
  id: string;
  bytes: Buffer;
}

function deriveKey(material: string): Key {
  return {
    id: createHash('sha256').update(`key-id:${material}`).digest('hex').slice(0, 12),
    bytes: createHash('sha256').update(material).digest(),
  };
}

export function createSecretBox(materials: readonly string[]): SecretBox {
  if (materials.length === 0) throw new Error('a secret box needs at least one key');
  const keys = materials.map(deriveKey);
  const sealing = keys[0] as Key;
  const box: SecretBox = {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealing.bytes, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(sealing.id));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url'));
      return `${PREFIX}${sealing.id}:${parts.join(':')}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [id, iv, tag, sealed] = stored.slice(PREFIX.length).split(':');
      if (!id || !iv || !tag || sealed === undefined) throw new Error('a malformed sealed endpoint secret');
      const key = keys.find((candidate) => candidate.id === id);
      if (!key) throw new UnknownSecretKeyError(id);
      // A full 16-byte tag only: GCM would otherwise accept a truncated one, which is far easier to forge.
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(key.id));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
    reseal(stored) {
      if (stored.startsWith(`${PREFIX}${sealing.id}:`)) return null;
      return box.seal(box.open(stored));
    },
  };
  return box;
}
