import { Type, type Static } from '@sinclair/typebox';
import {
  BusConfig,
  CommonConfig,
  ConfigError,
  DEVELOPMENT_SANDBOX_API_KEY,
  DEVELOPMENT_WEBHOOK_SECRET,
  PortNumber,
  Url,
} from '@payments/service-kit';

/** A Stripe event type's characters (`charge.dispute.closed`); an unknown type is allowed, an empty one is not. */
const EVENT_TYPE = '[a-z0-9_.]+';

export const ProviderSandboxConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3005),
  ...BusConfig,
  WEBHOOK_INGEST_URL: Url({ default: 'http://127.0.0.1:3004', description: 'Where its signed webhooks go' }),
  SANDBOX_ENABLED: Type.Boolean({
    default: false,
    description:
      'The sandbox plays Stripe: it serves its API and pays deposits and payouts by itself (amounts ending in 13 ' +
      'fail), so it runs only when asked to (`pnpm start`, tests)',
    production: '`true` is refused',
  }),
  SANDBOX_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 500,
    description:
      'How long after a PaymentIntent is created the sandbox pays it (unless a client tried to first), after a ' +
      'declined payment how long until it cancels it, after a payout is created how long until its bank answers, ' +
      'and how long a connected account waits for its verification (test ID number 222222222)',
  }),
  SANDBOX_AUTO_CONFIRM: Type.Boolean({
    default: true,
    description:
      'A PaymentIntent nobody confirmed within SANDBOX_DELAY_MS is paid by the sandbox with `pm_card_visa` (an ' +
      'amount whose minor units end in 13 with a declined card, then canceled); `false` leaves every one to a ' +
      "client, which confirms it with any of Stripe's test payment methods",
  }),
  SANDBOX_HOLD_PAYOUTS: Type.Boolean({
    default: false,
    description:
      'Every payout stays pending, its bank silent, until `POST /sandbox/payouts/{id}/release` (with SANDBOX_API_KEY ' +
      'and the JSON body `{"outcome": "paid"}` or `{"outcome": "failed"}`) answers it as told, instead of ' +
      'SANDBOX_DELAY_MS after it was made: a drill decides when and how each payout ends',
  }),
  SANDBOX_DUPLICATE_DELIVERY: Type.Boolean({
    default: false,
    description: 'Sends every Stripe event twice, to exercise deduplication downstream',
  }),
  SANDBOX_REORDER_EVENTS_MS: Type.Integer({
    minimum: 0,
    maximum: 10_000,
    default: 0,
    description:
      'Above 0, every Stripe event (each copy, with SANDBOX_DUPLICATE_DELIVERY) is held for a random time up to ' +
      'this many milliseconds and sent alongside the others, so a later event of an object (a higher refunded ' +
      "total, a dispute's close) may arrive before an earlier one, as Stripe allows; 0 sends them one at a time " +
      'in the order they happened',
  }),
  SANDBOX_FORGET_EVENTS: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0,
    description:
      'The share (0 to 1) of the events of SANDBOX_FORGET_EVENT_TYPES the sandbox never sends, though their change ' +
      'happens at the sandbox all the same, for reconciliation to find; each is logged and listed at ' +
      '`GET /sandbox/forgotten-events` (with SANDBOX_API_KEY). 0 forgets none',
  }),
  SANDBOX_FORGET_EVENT_TYPES: Type.String({
    pattern: `^${EVENT_TYPE}(,${EVENT_TYPE})*$`,
    default: 'payment_intent.succeeded,payout.paid,payout.failed,charge.refunded,charge.dispute.closed',
    description:
      'The Stripe event types, comma-separated, SANDBOX_FORGET_EVENTS may forget: by default the ones that move ' +
      'money in the ledger',
  }),
  SANDBOX_API_KEY: Type.String({
    minLength: 1,
    pattern: '^sk_test_',
    default: DEVELOPMENT_SANDBOX_API_KEY,
    description:
      'The secret key its Stripe-compatible API (`/v1`) accepts as the bearer token, as Stripe test keys are ' +
      '(stripe-node: `new Stripe(key, { host, port, protocol: "http" })`)',
  }),
  SANDBOX_PUBLISHABLE_KEY: Type.String({
    minLength: 1,
    pattern: '^pk_test_',
    default: 'pk_test_sandbox_development_only',
    description:
      "The publishable key a payer's client confirms a PaymentIntent with, together with its client secret (as " +
      'Stripe.js does); public by design, like every publishable key',
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
