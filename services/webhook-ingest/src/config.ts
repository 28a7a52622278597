import { Type, type Static } from '@sinclair/typebox';
import {
  ConfigError,
  DatabaseServiceConfig,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  DEVELOPMENT_WEBHOOK_SECRET,
  splitList,
  Url,
} from '@payments/service-kit';

export { DEVELOPMENT_WEBHOOK_SECRET };

/** A signing secret shorter than this could be guessed offline from one signed webhook (an HMAC key's strength). */
export const MINIMUM_WEBHOOK_SECRET_BYTES = 32;

/** How long a received webhook is kept: well past Stripe's 3 days of retries and the 30 days its events API keeps. */
export const DEFAULT_WEBHOOK_EVENT_RETENTION_DAYS = 35;

export const WebhookIngestConfigSchema = Type.Object({
  ...DatabaseServiceConfig(3004, 'payments_webhook_ingest', 'webhook-ingest'),
  LEDGER_URL: Url({
    default: 'http://127.0.0.1:3002',
    description: 'Asked what a payment is for when a webhook does not say its amount and currency',
  }),
  WEBHOOK_SECRETS: Type.Optional(
    Type.String({
      description:
        "The providers' signing secrets, comma-separated; every one is accepted, so a rotation adds the new secret " +
        'before removing the old. Elsewhere the development secret',
      production: `required, each at least ${MINIMUM_WEBHOOK_SECRET_BYTES} bytes; the development secret is refused`,
    }),
  ),
  WEBHOOK_TOLERANCE_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
    description: "How far a signature's timestamp may be from now (replay window)",
  }),
  PROVIDER: Type.Union([Type.Literal('none'), Type.Literal('stripe')], {
    default: 'none',
    description:
      "The payment provider whose events come in on /webhook/provider, as the ledger's PROVIDER: set both alike. " +
      "With `stripe`, production closes the stand-in's endpoints (see STAND_IN_CONFIRMATIONS)",
  }),
  STAND_IN_CONFIRMATIONS: Type.Optional(
    Type.Boolean({
      description:
        "A stand-in's confirmations are taken: /webhook/payment-status answers (and /webhook/payment, with " +
        'UNSIGNED_WEBHOOK_ENABLED); `false`: both answer 404, and only the provider confirms. Unset: on, except ' +
        'with NODE_ENV=production and PROVIDER=stripe',
      production: 'unset with PROVIDER=stripe is off',
    }),
  ),
  UNSIGNED_WEBHOOK_ENABLED: Type.Boolean({
    default: false,
    description: '/webhook/payment confirms payments without a signature: for development only',
    production: '`true` is refused',
  }),
  WEBHOOK_REPUBLISH_AFTER_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 5,
    description:
      'An event with an effect still unpublished this long after it was recorded is published by the republisher',
  }),
  WEBHOOK_REPUBLISH_INTERVAL_MS: Type.Integer({
    minimum: 10,
    maximum: 600_000,
    default: 2000,
    description: 'How often the republisher looks for such events',
  }),
  WEBHOOK_EVENT_RETENTION_DAYS: Type.Integer({
    minimum: 7,
    maximum: 3650,
    default: DEFAULT_WEBHOOK_EVENT_RETENTION_DAYS,
    description:
      'A received webhook is kept (and a redelivery of it recognised) this long, then deleted; one with an effect ' +
      'still unpublished is kept until it is published. Longer than any redelivery: Stripe retries for 3 days, ' +
      'and its events can be sent again for 30',
  }),
});

export type WebhookIngestConfig = Static<typeof WebhookIngestConfigSchema>;

export interface WebhookSettings {
  secrets: string[];
  usesDevelopmentSecret: boolean;
  toleranceSeconds: number;
  unsignedEnabled: boolean;
  /** /webhook/payment-status (and /webhook/payment, when unsigned ones are enabled) answer; off, they are 404. */
  standInConfirmations: boolean;
}

/**
 * The settings whose defaults depend on NODE_ENV. Production refuses to start without WEBHOOK_SECRETS, with the
 * development secret or a short one, or with the unsigned endpoint on; with PROVIDER=stripe it takes no stand-in's
 * confirmation unless STAND_IN_CONFIRMATIONS=true.
 */
export function resolveWebhookSettings(config: WebhookIngestConfig): WebhookSettings {
  const production = config.NODE_ENV === 'production';
  const configured = splitList(config.WEBHOOK_SECRETS);
  if (production && configured.length === 0) {
    throw new ConfigError('Invalid configuration: WEBHOOK_SECRETS is required when NODE_ENV=production');
  }
  if (production && configured.includes(DEVELOPMENT_WEBHOOK_SECRET)) {
    throw new ConfigError('Invalid configuration: WEBHOOK_SECRETS must not contain the development secret');
  }
  const short = configured.filter((secret) => Buffer.byteLength(secret) < MINIMUM_WEBHOOK_SECRET_BYTES);
  if (production && short.length > 0) {
    // Which one is never said: the message would carry a piece of a secret into the logs.
    throw new ConfigError(
      `Invalid configuration: WEBHOOK_SECRETS has ${short.length} secret(s) under ` +
        `${MINIMUM_WEBHOOK_SECRET_BYTES} bytes, refused when NODE_ENV=production`,
    );
  }
  if (production && config.UNSIGNED_WEBHOOK_ENABLED) {
    throw new ConfigError(
      'Invalid configuration: UNSIGNED_WEBHOOK_ENABLED=true is refused when NODE_ENV=production ' +
        '(anyone could confirm a payment without a signature)',
    );
  }
  return {
    secrets: configured.length > 0 ? configured : [DEVELOPMENT_WEBHOOK_SECRET],
    usesDevelopmentSecret: configured.length === 0,
    toleranceSeconds: config.WEBHOOK_TOLERANCE_SECONDS,
    unsignedEnabled: config.UNSIGNED_WEBHOOK_ENABLED,
    standInConfirmations: config.STAND_IN_CONFIRMATIONS ?? !(production && config.PROVIDER === 'stripe'),
  };
}
