import { Type, type Static } from '@sinclair/typebox';
import {
  BusConfig,
  CommonConfig,
  ConfigError,
  DEVELOPMENT_WEBHOOK_SECRET,
  PortNumber,
  Url,
} from '@payments/service-kit';

/** Used when no key is configured; public, so refused beyond loopback like every development secret. */
export const DEVELOPMENT_SANDBOX_API_KEY = 'sk_test_sandbox_development_only';

export const ProviderSandboxConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3005),
  ...BusConfig,
  WEBHOOK_INGEST_URL: Url({ default: 'http://127.0.0.1:3004', description: 'Where its signed webhooks go' }),
  SANDBOX_ENABLED: Type.Boolean({
    default: false,
    description:
      'The sandbox pays deposits and payouts by itself (amounts ending in 13 fail), so it runs only when asked to ' +
      '(`pnpm start`, tests)',
    production: '`true` is refused',
  }),
  SANDBOX_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 500,
    description:
      'How long after a deposit or withdrawal is requested the sandbox answers it, and after a declined deposit ' +
      'how long until it cancels the payment',
  }),
  SANDBOX_DUPLICATE_DELIVERY: Type.Boolean({
    default: false,
    description: 'Sends every provider event twice, to exercise deduplication downstream',
  }),
  SANDBOX_API_KEY: Type.String({
    minLength: 1,
    pattern: '^sk_test_',
    default: DEVELOPMENT_SANDBOX_API_KEY,
    description:
      'The secret key its Stripe-compatible API (`/v1`) accepts as the bearer token, as Stripe test keys are ' +
      '(stripe-node: `new Stripe(key, { host, port, protocol: "http" })`)',
  }),
  SANDBOX_WEBHOOK_SECRET: Type.String({
    minLength: 1,
    default: DEVELOPMENT_WEBHOOK_SECRET,
    description: "The secret its webhooks are signed with: one of webhook-ingest's WEBHOOK_SECRETS",
  }),
});

export type ProviderSandboxConfig = Static<typeof ProviderSandboxConfigSchema>;

export type SandboxMode = { enabled: true } | { enabled: false; reason: string };

/** A stand-in that pays by itself must never run where real money moves: production refuses to start. */
export function sandboxMode(config: ProviderSandboxConfig): SandboxMode {
  if (!config.SANDBOX_ENABLED) return { enabled: false, reason: 'SANDBOX_ENABLED is not true' };
  if (config.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration: SANDBOX_ENABLED=true is refused when NODE_ENV=production ' +
        '(the sandbox pays deposits by itself)',
    );
  }
  return { enabled: true };
}
