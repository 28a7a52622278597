import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Used when no key is configured outside production; public, so refused beyond loopback. */
export const DEVELOPMENT_ENDPOINT_SECRETS_KEY = 'endpoint_secrets_development_only_do_not_use_in_production';

const PREFIX = 'enc:v1:';
const TAG_BYTES = 16;

/**
 * Endpoints' signing secrets at rest: AES-256-GCM under a key from configuration, so a copy of the database
 * alone cannot sign as us. The first key seals; every key opens (rotation: add the new key first, re-seal by
 * rotating endpoint secrets, then drop the old key). Values stored before encryption open as they are.
 */
export interface SecretBox {
  seal(secret: string): string;
  open(stored: string): string;
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
  return {
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
      const key = keys.find((candidate) => candidate.id === id);
      if (!key || !iv || !tag || sealed === undefined) {
        throw new Error(`no configured key opens this endpoint secret (key id ${id ?? '?'})`);
      }
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
  };
}
