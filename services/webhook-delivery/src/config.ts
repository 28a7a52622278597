import { Type, type Static } from '@sinclair/typebox';
import {
  BusConfig,
  CommonConfig,
  ConfigError,
  PortNumber,
  splitList,
  TokenConfig,
  Url,
} from '@payments/service-kit';
import { DEVELOPMENT_ENDPOINT_SECRETS_KEY } from './data/secret-box.js';

export const WebhookDeliveryConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3006),
  DATABASE_URL: Url('postgres://postgres@127.0.0.1:5432/payments_webhook_delivery'),
  ...BusConfig,
  ...TokenConfig,
  /** Where the revocations in force and users (rendered for `user.updated`) come from. */
  IDENTITY_URL: Url('http://127.0.0.1:3001'),
  /** Defaults to identity's `/.well-known/jwks.json`. */
  JWKS_URL: Type.Optional(Url()),
  /** Transactions and accounts are rendered by the ledger's internal API, as its public API would. */
  LEDGER_URL: Url('http://127.0.0.1:3002'),
  /**
   * Comma-separated keys that encrypt endpoints' signing secrets at rest; the first encrypts, all decrypt
   * (rotation). Required in production; elsewhere a public development key.
   */
  WEBHOOK_ENDPOINT_SECRETS_KEYS: Type.Optional(Type.String()),
  /** Endpoints on loopback, private or link-local addresses: for development only, refused in production. */
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Boolean({ default: false }),
  MAX_ENDPOINTS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
  /** One delivery attempt's whole budget: connect, send, answer. */
  DELIVERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  /** Attempts in flight per process, and per endpoint (so one slow endpoint never holds up the others). */
  DELIVERY_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 32 }),
  DELIVERY_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 4 }),
  /** Retry n waits about base·2^(n-1) (with jitter), capped at the maximum. */
  DELIVERY_BACKOFF_BASE_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000 }),
  DELIVERY_BACKOFF_MAX_MS: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 3_600_000 }),
  /** A delivery is retried this long after it was created (or redelivered), then marked failed. */
  DELIVERY_RETRY_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 2_592_000, default: 259_200 }),
  /** How soon it looks for due deliveries again after finding some; idle, the wait doubles up to 5× this. */
  DELIVERY_POLL_INTERVAL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  /** Finished deliveries (succeeded or failed) stay in the log this long. */
  DELIVERY_LOG_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** Off: this process serves the API and takes events, and leaves sending to other processes. */
  DELIVERY_WORKER_ENABLED: Type.Boolean({ default: true }),
});

export type WebhookDeliveryConfig = Static<typeof WebhookDeliveryConfigSchema>;

/** Production refuses private endpoint URLs and a retry window shorter than 24 hours. */
export function checkProductionSettings(config: WebhookDeliveryConfig): void {
  if (config.NODE_ENV !== 'production') return;
  if (config.WEBHOOK_ALLOW_PRIVATE_URLS) {
    throw new ConfigError(
      'Invalid configuration: WEBHOOK_ALLOW_PRIVATE_URLS=true is refused when NODE_ENV=production ' +
        '(endpoints could reach the internal network)',
    );
  }
  if (config.DELIVERY_RETRY_WINDOW_SECONDS < 86_400) {
    throw new ConfigError(
      'Invalid configuration: DELIVERY_RETRY_WINDOW_SECONDS must be at least 86400 when NODE_ENV=production',
    );
  }
}

/** The keys that encrypt endpoint secrets, and whether they are the public development one. */
export function resolveSecretKeys(config: WebhookDeliveryConfig): { keys: string[]; development: boolean } {
  const configured = splitList(config.WEBHOOK_ENDPOINT_SECRETS_KEYS);
  const production = config.NODE_ENV === 'production';
  if (production && configured.length === 0) {
    throw new ConfigError(
      'Invalid configuration: WEBHOOK_ENDPOINT_SECRETS_KEYS is required when NODE_ENV=production',
    );
  }
  if (configured.includes(DEVELOPMENT_ENDPOINT_SECRETS_KEY) && production) {
    throw new ConfigError(
      'Invalid configuration: WEBHOOK_ENDPOINT_SECRETS_KEYS must not hold the development key',
    );
  }
  const short = configured.find((key) => key.length < 32);
  if (short !== undefined) {
    throw new ConfigError(
      'Invalid configuration: WEBHOOK_ENDPOINT_SECRETS_KEYS: each key must be at least 32 characters',
    );
  }
  return configured.length > 0
    ? { keys: configured, development: false }
    : { keys: [DEVELOPMENT_ENDPOINT_SECRETS_KEY], development: true };
}
