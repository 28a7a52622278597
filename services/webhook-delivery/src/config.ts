import { Type, type Static } from '@sinclair/typebox';
import {
  ConfigError,
  DatabaseServiceConfig,
  IdentityTokensConfig,
  InboxConfig,
  splitList,
  Url,
} from '@payments/service-kit';
import { DEVELOPMENT_ENDPOINT_SECRETS_KEY } from './data/secret-box.js';

const Bounded = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, default: fallback, description });

export const WebhookDeliveryConfigSchema = Type.Object({
  ...DatabaseServiceConfig(3006, 'payments_webhook_delivery', 'webhook-delivery'),
  ...InboxConfig,
  ...IdentityTokensConfig('Where the revocations in force and users (rendered for `user.updated`) come from'),
  LEDGER_URL: Url({
    default: 'http://127.0.0.1:3002',
    description:
      "Transactions and accounts are rendered by the ledger's internal API, as its public API would",
  }),
  WEBHOOK_ENDPOINT_SECRETS_KEYS: Type.Optional(
    Type.String({
      description:
        "Comma-separated keys (32 characters or more) that encrypt endpoints' signing secrets at rest; the first " +
        'encrypts, all decrypt (rotation). Elsewhere a public development key',
      production: 'required; the development key is refused',
    }),
  ),
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Boolean({
    default: false,
    description: 'Endpoints on loopback, private or link-local addresses: for development only',
    production: '`true` is refused',
  }),
  MAX_ENDPOINTS_PER_USER: Bounded(1, 1000, 16, 'Webhook endpoints per user at most'),
  DELIVERY_TIMEOUT_MS: Bounded(
    100,
    60_000,
    10_000,
    "One delivery attempt's whole budget: connect, send, answer",
  ),
  DELIVERY_CONCURRENCY: Bounded(1, 1000, 32, 'Attempts in flight per process'),
  DELIVERY_ENDPOINT_CONCURRENCY: Bounded(
    1,
    100,
    4,
    'Attempts in flight per endpoint, so one slow endpoint never holds up the others',
  ),
  DELIVERY_BACKOFF_BASE_MS: Bounded(
    1,
    3_600_000,
    30_000,
    'Retry n waits about base·2^(n-1) (with jitter), capped at DELIVERY_BACKOFF_MAX_MS',
  ),
  DELIVERY_BACKOFF_MAX_MS: Bounded(1, 86_400_000, 3_600_000, 'The longest wait between two attempts'),
  DELIVERY_RETRY_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 2_592_000,
    default: 259_200,
    description: 'A delivery is retried this long after it was created (or redelivered), then marked failed',
    production: 'less than 86400 is refused',
  }),
  DELIVERY_POLL_INTERVAL_MS: Bounded(
    10,
    60_000,
    1000,
    'How soon it looks for due deliveries again after finding some; idle, the wait doubles up to 5× this',
  ),
  DELIVERY_LOG_RETENTION_DAYS: Bounded(
    1,
    3650,
    30,
    'Finished deliveries (succeeded or failed) stay in the log this long',
  ),
  WEBHOOK_DRILL_TIMEOUT_MS: Bounded(
    500,
    60_000,
    8_000,
    "A drill's whole budget, all its cases together (each also bounded by DELIVERY_TIMEOUT_MS); keep it under " +
      "the gateway's UPSTREAM_TIMEOUT_MS, since the drill answers with its report",
  ),
  WEBHOOK_DRILL_INTERVAL_SECONDS: Bounded(1, 86_400, 60, 'One drill per webhook endpoint this often at most'),
  WEBHOOK_DRILLS_PER_USER_PER_HOUR: Bounded(
    1,
    1000,
    10,
    "Drills per user in any hour, all of the user's endpoints",
  ),
  DELIVERY_WORKER_ENABLED: Type.Boolean({
    default: true,
    description: 'Off: this process serves the API and takes events, and leaves sending to other processes',
  }),
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
