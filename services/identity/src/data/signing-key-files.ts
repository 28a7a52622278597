import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ConfigError, generateTokenKeyPair, type Logger } from '@payments/service-kit';
import type { IdentityConfig } from '../config.js';
import {
  isP256,
  toSigningKey,
  toVerificationKey,
  type SigningKey,
  type SigningKeys,
} from '../domain/signing-keys.js';

type KeyConfig = Pick<
  IdentityConfig,
  'NODE_ENV' | 'DATA_DIR' | 'JWT_PRIVATE_KEY' | 'JWT_PRIVATE_KEY_FILE' | 'JWT_PREVIOUS_PUBLIC_KEYS_FILE'
>;

const PUBLIC_KEY_PEM = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;

export function developmentKeyPath(dataDir: string): string {
  return resolve(process.cwd(), dataDir, 'identity', 'jwt-signing-key.pem');
}

/**
 * The signing key from JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE, plus the retired public keys still listed in the
 * JWKS. Outside production, a missing key is generated once and kept under DATA_DIR; production refuses to start.
 */
export async function loadSigningKeys(config: KeyConfig, logger: Logger): Promise<SigningKeys> {
  return {
    current: await loadCurrentKey(config, logger),
    previous: config.JWT_PREVIOUS_PUBLIC_KEYS_FILE
      ? await loadPreviousKeys(config.JWT_PREVIOUS_PUBLIC_KEYS_FILE)
      : [],
  };
}

async function loadCurrentKey(config: KeyConfig, logger: Logger): Promise<SigningKey> {
  if (config.JWT_PRIVATE_KEY) {
    return parsePrivateKey(config.JWT_PRIVATE_KEY.replaceAll('\\n', '\n'), 'JWT_PRIVATE_KEY');
  }
  if (config.JWT_PRIVATE_KEY_FILE) {
    const pem = await readConfiguredFile(config.JWT_PRIVATE_KEY_FILE, 'JWT_PRIVATE_KEY_FILE');
    return parsePrivateKey(pem, 'JWT_PRIVATE_KEY_FILE');
  }
  if (config.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration: JWT_PRIVATE_KEY (or JWT_PRIVATE_KEY_FILE) is required in production; ' +
        'give an EC P-256 private key in PEM form',
    );
  }
  const path = developmentKeyPath(config.DATA_DIR);
  const key = await loadOrCreateDevelopmentKey(path);
  logger.warn(
    { path, kid: key.kid },
    'using a DEVELOPMENT token signing key generated on this machine; set JWT_PRIVATE_KEY in production',
  );
  return key;
}

async function loadOrCreateDevelopmentKey(path: string): Promise<SigningKey> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  try {
    const { privateKey } = generateTokenKeyPair();
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await writeFile(path, pem, { flag: 'wx', mode: 0o600 });
    return toSigningKey(privateKey);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // An earlier start made the key, or a concurrent one is making it and may not have finished writing.
  for (let attempt = 0; ; attempt++) {
    const existing = await readFile(path, 'utf8');
    try {
      return parsePrivateKey(existing, path);
    } catch (error) {
      if (attempt >= 20) throw error;
      await delay(50);
    }
  }
}

async function loadPreviousKeys(file: string) {
  const text = await readConfiguredFile(file, 'JWT_PREVIOUS_PUBLIC_KEYS_FILE');
  const blocks = text.match(PUBLIC_KEY_PEM) ?? [];
  if (blocks.length === 0) {
    throw new ConfigError(
      `Invalid configuration: JWT_PREVIOUS_PUBLIC_KEYS_FILE (${file}) holds no PEM public key`,
    );
  }
  return blocks.map((pem) => {
    let key: KeyObject;
    try {
      key = createPublicKey(pem);
    } catch {
      throw new ConfigError(
        `Invalid configuration: JWT_PREVIOUS_PUBLIC_KEYS_FILE (${file}) holds an unreadable public key`,
      );
    }
    if (!isP256(key)) {
      throw new ConfigError(
        `Invalid configuration: JWT_PREVIOUS_PUBLIC_KEYS_FILE (${file}) holds a key that is not EC P-256`,
      );
    }
    return toVerificationKey(key);
  });
}

function parsePrivateKey(pem: string, source: string): SigningKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new ConfigError(`Invalid configuration: ${source} is not a readable PEM private key`);
  }
  if (!isP256(key)) {
    throw new ConfigError(`Invalid configuration: ${source} must be an EC P-256 key (tokens are ES256)`);
  }
  return toSigningKey(key);
}

async function readConfiguredFile(file: string, variable: string): Promise<string> {
  try {
    return await readFile(resolve(process.cwd(), file), 'utf8');
  } catch (error) {
    throw new ConfigError(
      `Invalid configuration: ${variable} names a file that cannot be read (${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}
