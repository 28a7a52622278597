import { Type, type Static } from '@sinclair/typebox';
import { BusConfig, CommonConfig, PortNumber, TokenConfig, Url } from '@payments/service-kit';

const FixedFee = Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,8})?$', default: '0' });
const PercentFee = Type.String({ pattern: '^(100(\\.0{1,6})?|\\d{1,2}(\\.\\d{1,6})?)$', default: '0' });

export const LedgerConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3002),
  DATABASE_URL: Url('postgres://postgres@127.0.0.1:5432/payments_ledger'),
  ...BusConfig,
  ...TokenConfig,
  IDENTITY_URL: Url('http://127.0.0.1:3001'),
  /** Where the token keys are; defaults to identity's `/.well-known/jwks.json`. */
  JWKS_URL: Type.Optional(Url()),
  CURRENCY_URL: Url('http://127.0.0.1:3003'),
  /** Currency details (exponent, supported set) are cached this long; a stale value serves while the service is down. */
  CURRENCY_CACHE_TTL_SECONDS: Type.Integer({ minimum: 1, default: 300 }),
  RATE_CACHE_TTL_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  /**
   * How long past its TTL a cached exchange rate may still convert money while the currency service is down; after
   * that a conversion answers 503, so nobody trades against a rate the market has left behind.
   */
  RATE_STALE_GRACE_SECONDS: Type.Integer({ minimum: 0, default: 300 }),
  /** The largest amount one operation may move, in major units of its currency. */
  MAX_AMOUNT: Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1_000_000 }),
  MAX_ACCOUNTS_PER_USER: Type.Integer({ minimum: 1, default: 10 }),
  /** A withdrawal or transfer still pending after this long is canceled and its hold released. */
  HOLD_EXPIRY_SECONDS: Type.Integer({ minimum: 1, default: 86_400 }),
  HOLD_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 10, default: 30_000 }),
  /** Idempotency keys are kept at least 24 hours. */
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ minimum: 24, default: 24 }),
  /** Fee schedule (v1.1): a fixed part in major units of the account currency plus a percentage of the amount. */
  FEE_DEPOSIT_FIXED: FixedFee,
  FEE_DEPOSIT_PERCENT: PercentFee,
  FEE_WITHDRAWAL_FIXED: FixedFee,
  FEE_WITHDRAWAL_PERCENT: PercentFee,
  FEE_TRANSFER_FIXED: FixedFee,
  FEE_TRANSFER_PERCENT: PercentFee,
});

export type LedgerConfig = Static<typeof LedgerConfigSchema>;
