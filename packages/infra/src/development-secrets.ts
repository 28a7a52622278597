import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The secrets `pnpm start` runs with: random, never the public development values the services fall back to. */
export interface DevelopmentSecrets {
  /** SERVICE_TOKEN: what services show each other on `/internal/*` and `/metrics`. */
  serviceToken: string;
  /** WEBHOOK_SECRETS for webhook-ingest and SANDBOX_WEBHOOK_SECRET for the sandbox that signs with it. */
  webhookSecret: string;
  /** SANDBOX_API_KEY: the test key the sandbox's Stripe-compatible API accepts. */
  sandboxApiKey: string;
  /** Where that API answers, as the last start left it (recordSandboxApiUrl); absent when it ran no sandbox. */
  sandboxApiUrl?: string;
}

const newSandboxApiKey = () => `sk_test_${randomBytes(24).toString('hex')}`;

export function generateDevelopmentSecrets(): DevelopmentSecrets {
  return {
    serviceToken: randomBytes(32).toString('hex'),
    webhookSecret: `whsec_${randomBytes(24).toString('hex')}`,
    sandboxApiKey: newSandboxApiKey(),
  };
}

export function developmentSecretsPath(dataDir: string): string {
  return path.join(dataDir, 'development-secrets.json');
}

/**
 * The secrets kept in `<dataDir>/development-secrets.json`, made on the first start (readable by the owner only),
 * so a restart, the bench and a curl that signs a webhook all find the same ones.
 */
export async function loadDevelopmentSecrets(
  dataDir: string,
): Promise<{ secrets: DevelopmentSecrets; file: string }> {
  const file = developmentSecretsPath(dataDir);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(file, `${JSON.stringify(generateDevelopmentSecrets(), null, 2)}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stored = JSON.parse(await readFile(file, 'utf8')) as Partial<DevelopmentSecrets>;
  if (!stored.serviceToken || !stored.webhookSecret) {
    throw new Error(`${file} is missing serviceToken or webhookSecret; delete it to make new ones`);
  }
  const secrets: DevelopmentSecrets = {
    serviceToken: stored.serviceToken,
    webhookSecret: stored.webhookSecret,
    sandboxApiKey: stored.sandboxApiKey || newSandboxApiKey(),
  };
  // A file from before the sandbox had an API: the key is added, the other secrets kept.
  if (!stored.sandboxApiKey) await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return { secrets, file };
}

/**
 * Writes where the sandbox's API answers (`sandboxApiUrl`) beside its key, or, for a start without a sandbox,
 * removes it: a tool finds the key and the URL it goes to in one file, as this start runs them.
 */
export async function recordSandboxApiUrl(file: string, url: string | null): Promise<void> {
  const { sandboxApiUrl: recorded, ...secrets } = JSON.parse(
    await readFile(file, 'utf8'),
  ) as Partial<DevelopmentSecrets>;
  if (recorded === (url ?? undefined)) return;
  const updated = url ? { ...secrets, sandboxApiUrl: url } : secrets;
  await writeFile(file, `${JSON.stringify(updated, null, 2)}\n`, { mode: 0o600 });
}
