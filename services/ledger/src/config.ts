import { Type, type Static } from '@sinclair/typebox';
import {
  ConfigError,
  DatabaseServiceConfig,
  DEVELOPMENT_SANDBOX_API_KEY,
  IdentityTokensConfig,
  InboxConfig,
  Url,
} from '@payments/service-kit';
import type { MatchPolicy } from './domain/provider-object.js';

const FixedFee = (operation: string) =>
  Type.String({
    pattern: '^\\d{1,9}(\\.\\d{1,8})?$',
    default: '0',
    description: `Fee schedule (v1.1): the fixed part of a ${operation}'s fee, in major units of the account currency`,
  });
const PercentFee = (operation: string) =>
  Type.String({
    pattern: '^(100(\\.0{1,6})?|\\d{1,2}(\\.\\d{1,6})?)$',
    default: '0',
    description: `Fee schedule (v1.1): the percentage of a ${operation}'s amount added to its fee`,
  });
const Seconds = (minimum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, default: fallback, description });

export const LedgerConfigSchema = Type.Object({
  ...DatabaseServiceConfig(3002, 'payments_ledger', 'ledger'),
  ...InboxConfig,
  ...IdentityTokensConfig('Where identity answers (the revocations in force)'),
  CURRENCY_URL: Url({
    default: 'http://127.0.0.1:3003',
    description: 'Where currency answers (currencies and rates)',
  }),
  WEBHOOK_INGEST_URL: Url({
    default: 'http://127.0.0.1:3004',
    description: 'Where webhook-ingest answers (the provider events of a transaction timeline)',
  }),
  WEBHOOK_DELIVERY_URL: Url({
    default: 'http://127.0.0.1:3006',
    description:
      'Where webhook-delivery answers (the outgoing webhooks of a transaction timeline, and the delivery ' +
      'queue GET /admin/overview reads from its /metrics)',
  }),
  CURRENCY_CACHE_TTL_SECONDS: Seconds(
    1,
    300,
    'Currency details (exponent, supported set) are cached this long; a stale value serves while the service is down',
  ),
  RATE_CACHE_TTL_SECONDS: Seconds(1, 60, 'Exchange rates are cached this long'),
  RATE_STALE_GRACE_SECONDS: Seconds(
    0,
    300,
    'How long past its TTL a cached exchange rate may still convert money while the currency service is down; ' +
      'after that a conversion answers 503, so nobody trades against a rate the market has left behind',
  ),
  MAX_AMOUNT: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 1_000_000,
    description: 'The largest amount one operation may move, in major units of its currency',
  }),
  MAX_ACCOUNTS_PER_USER: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'Open accounts per user at most',
  }),
  HOLD_EXPIRY_SECONDS: Seconds(
    1,
    86_400,
    'A withdrawal or transfer still pending after this long is canceled and its hold released',
  ),
  DEPOSIT_EXPIRY_SECONDS: Seconds(
    1,
    86_400,
    'A deposit still unpaid after this long is canceled (a payment the provider captures later is credited as a ' +
      'late payment)',
  ),
  HOLD_SWEEP_INTERVAL_MS: Type.Integer({
    minimum: 10,
    default: 30_000,
    description: 'How often expired holds are looked for',
  }),
  IDEMPOTENCY_TTL_HOURS: Type.Integer({
    minimum: 24,
    default: 24,
    description: 'How long an Idempotency-Key is remembered (at least 24 hours)',
  }),
  PROVIDER: Type.Union([Type.Literal('none'), Type.Literal('stripe')], {
    default: 'none',
    description:
      'The payment provider each deposit is asked of: `stripe` creates a PaymentIntent for it (through the ' +
      'official library, against STRIPE_API_URL); `none` asks nobody, and deposits wait for a confirmation ' +
      'webhook sent from outside',
  }),
  STRIPE_SECRET_KEY: Type.Optional(
    Type.String({
      pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9_]+$',
      description:
        'The Stripe secret (or restricted) key the ledger calls Stripe with; required with PROVIDER=stripe. ' +
        "The sandbox's key (its SANDBOX_API_KEY) where the sandbox plays Stripe",
      production: "the sandbox's development key is refused",
    }),
  ),
  STRIPE_API_URL: Type.Optional(
    Url({
      description:
        "Where Stripe's API answers; unset, Stripe itself (https://api.stripe.com). The provider sandbox serves " +
        'the same API (http://127.0.0.1:3005)',
    }),
  ),
  STAND_IN_CONFIRMATIONS: Type.Optional(
    Type.Boolean({
      description:
        "Whether SPEC's stand-in confirmations move money: a provider event whose object id is the transaction's " +
        'own id, and `/webhook/payment` and `/webhook/payment-status`. Unset: on, except with NODE_ENV=production ' +
        'and PROVIDER=stripe, where only the objects the ledger asked the provider for count',
    }),
  ),
  PAYOUT_ACCOUNT_AUTO_LINK: Type.Optional(
    Type.Boolean({
      description:
        'A withdrawal by a user with no payout account, paid out through a provider, first links one (as ' +
        '`POST /payout-account` does) once it passes the amount, currency and funds checks, so a client that never ' +
        'heard of payout accounts can withdraw; `false`: it is a 422 that holds nothing. Unset: on unless ' +
        'NODE_ENV=production',
      production: '`true` is refused (unset is off)',
    }),
  ),
  PAYOUT_ONBOARDING_RETURN_URL: Url({
    default: 'http://127.0.0.1:8080/payout-account',
    description:
      "Where the provider sends a user back after the onboarding of their payout account (Stripe's account link " +
      '`return_url` and `refresh_url`)',
  }),
  PUBLIC_URL: Type.Optional(
    Url({
      description:
        "The gateway's public address as payers reach it (https://payments.example.com): a pending deposit shows " +
        'its owner the payment page there, `{PUBLIC_URL}/pay/{transaction_id}` (`provider_payment.payment_url`). ' +
        'Unset: http://localhost:8080 (development and tests only; `pnpm start` sets the address it serves on)',
      production: 'unset: no `payment_url` is shown; plain http only on a loopback address',
    }),
  ),
  RECONCILIATION_INTERVAL_SECONDS: Seconds(
    0,
    3_600,
    "How often the books are reconciled with the payment provider's own records (with a provider); 0: only when " +
      'an admin asks (POST /admin/reconciliation/runs)',
  ),
  RECONCILIATION_GRACE_SECONDS: Seconds(
    0,
    600,
    'A payment or payout that changed more recently than this is left to the next reconciliation: its events may ' +
      'still be on their way',
  ),
  RECONCILIATION_LOOKBACK_SECONDS: Seconds(
    60,
    86_400,
    "How far back each reconciliation reads the provider's records at least (further while an older one is still " +
      'unsettled)',
  ),
  DISPUTE_WINDOW_DAYS: Type.Integer({
    minimum: 1,
    maximum: 540,
    default: 120,
    description:
      'How long after a card deposit its payer may still dispute it (card networks: 120 days for most reasons): ' +
      'GET /admin/chargeback-exposure counts the card deposits completed within it',
  }),
  OVERVIEW_PART_TIMEOUT_MS: Type.Integer({
    minimum: 50,
    maximum: 30_000,
    default: 2_000,
    description:
      'How long GET /admin/overview waits for each of its parts (the books, the broker, each service’s /metrics) ' +
      'before it answers without that part, naming it in `missing`',
  }),
  FEE_DEPOSIT_FIXED: FixedFee('deposit'),
  FEE_DEPOSIT_PERCENT: PercentFee('deposit'),
  FEE_WITHDRAWAL_FIXED: FixedFee('withdrawal'),
  FEE_WITHDRAWAL_PERCENT: PercentFee('withdrawal'),
  FEE_TRANSFER_FIXED: FixedFee('transfer'),
  FEE_TRANSFER_PERCENT: PercentFee('transfer'),
});

export type LedgerConfig = Static<typeof LedgerConfigSchema>;

export type ProviderSettings =
  | { provider: 'none' }
  | { provider: 'stripe'; secretKey: string; apiUrl?: string; onboardingReturnUrl: string };

/** The payment provider the ledger asks; PROVIDER=stripe needs its key, and production refuses the sandbox's. */
export function providerSettingsOf(config: LedgerConfig): ProviderSettings {
  if (config.PROVIDER === 'none') return { provider: 'none' };
  const secretKey = config.STRIPE_SECRET_KEY;
  if (!secretKey) {
    throw new ConfigError('Invalid configuration: PROVIDER=stripe needs STRIPE_SECRET_KEY');
  }
  if (config.NODE_ENV === 'production' && secretKey === DEVELOPMENT_SANDBOX_API_KEY) {
    throw new ConfigError(
      "Invalid configuration: STRIPE_SECRET_KEY is the provider sandbox's development key, refused when " +
        'NODE_ENV=production',
    );
  }
  return {
    provider: 'stripe',
    secretKey,
    apiUrl: config.STRIPE_API_URL,
    onboardingReturnUrl: config.PAYOUT_ONBOARDING_RETURN_URL,
  };
}

/**
 * Which provider objects may move money (domain/provider-object.ts): SPEC's stand-ins unless production asks a real
 * provider (or STAND_IN_CONFIRMATIONS says otherwise), and only objects of the mode the provider's key works in.
 */
export function providerObjectPolicyOf(config: LedgerConfig): MatchPolicy {
  const realProvider = config.NODE_ENV === 'production' && config.PROVIDER === 'stripe';
  return {
    standIn: config.STAND_IN_CONFIRMATIONS ?? !realProvider,
    livemode: config.PROVIDER === 'stripe' && /^(sk|rk)_live_/.test(config.STRIPE_SECRET_KEY ?? ''),
  };
}

/**
 * Whether a withdrawal with no payout account links one itself (ADR 0099): in development systems, never in
 * production, where the account must be onboarded by its user before anything is paid to it.
 */
export function payoutAccountAutoLinkOf(config: LedgerConfig): boolean {
  const production = config.NODE_ENV === 'production';
  if (production && config.PAYOUT_ACCOUNT_AUTO_LINK === true) {
    throw new ConfigError(
      'Invalid configuration: PAYOUT_ACCOUNT_AUTO_LINK=true is refused when NODE_ENV=production: a user links ' +
        'their payout account with POST /payout-account',
    );
  }
  return config.PAYOUT_ACCOUNT_AUTO_LINK ?? !production;
}

/** Where the gateway serves the payment page when nobody said: `pnpm start`'s address. Never used in production. */
export const DEVELOPMENT_PUBLIC_URL = 'http://localhost:8080';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The base of each deposit's payment page (ADR 0128): PUBLIC_URL, without a trailing slash; unset, the development
 * address, or in production none (a link to a machine the payer cannot reach is worse than no link).
 */
export function paymentPageBaseOf(config: LedgerConfig): string | null {
  const production = config.NODE_ENV === 'production';
  const given = config.PUBLIC_URL;
  if (given === undefined) return production ? null : DEVELOPMENT_PUBLIC_URL;
  const refuse = (why: string) => new ConfigError(`Invalid configuration: PUBLIC_URL ${why} (got ${given})`);
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an http(s) address');
  if (url.search || url.hash || url.username || url.password)
    throw refuse('must be an address without query, fragment or credentials');
  if (production && url.protocol === 'http:' && !LOOPBACK.has(url.hostname))
    throw refuse('must be https when NODE_ENV=production, unless it is a loopback address');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
