import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

// The package declares Algorithm as an ambient const enum, which isolated modules cannot read; 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

/** OWASP's minimum for argon2id: 19 MiB, 2 passes, 1 lane. */
export const ARGON2_OPTIONS: Options = {
  algorithm: ARGON2ID,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
  /** Spends the same time as a real verification, for logins of users that do not exist. */
  verifyDummy(password: string): Promise<void>;
}

export async function createPasswordHasher(options: Options = ARGON2_OPTIONS): Promise<PasswordHasher> {
  const dummyHash = await hash(randomBytes(24).toString('base64url'), options);
  const verifyHash = async (passwordHash: string, password: string) => {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  };
  return {
    hash: (password) => hash(password, options),
    verify: verifyHash,
    async verifyDummy(password) {
      await verifyHash(dummyHash, password);
    },
  };
}
