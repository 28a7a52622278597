import { Type, type Static } from '@sinclair/typebox';
import { BusConfig, CommonConfig, PortNumber, TokenConfig, Url } from '@payments/service-kit';

/** No token lives longer than this whatever TOKEN_TTL_SECONDS was when it was issued (user-wide revocations last as long). */
export const MAX_TOKEN_TTL_SECONDS = 86_400;

export const IdentityConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3001),
  DATABASE_URL: Url('postgres://postgres@127.0.0.1:5432/payments_identity'),
  ...BusConfig,
  ...TokenConfig,
  LEDGER_URL: Url('http://127.0.0.1:3002'),
  TOKEN_TTL_SECONDS: Type.Integer({ minimum: 30, maximum: MAX_TOKEN_TTL_SECONDS, default: 900 }),
  /** How long a session lasts from its login, across refreshes (`auth_time`); then the user logs in again. */
  SESSION_MAX_SECONDS: Type.Integer({ minimum: 30, maximum: 2_592_000, default: 43_200 }),
  /** PEM of the EC P-256 signing key; literal "\n" sequences are accepted for one-line environments. */
  JWT_PRIVATE_KEY: Type.Optional(Type.String({ minLength: 1 })),
  JWT_PRIVATE_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** PEM public keys of retired signing keys, still listed in the JWKS until their tokens expire. */
  JWT_PREVIOUS_PUBLIC_KEYS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** Where development state lives (the generated signing key), relative to the working directory. */
  DATA_DIR: Type.String({ default: '.data', minLength: 1 }),
  ADMIN_USERNAME: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_EMAIL: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
  LOGIN_MAX_FAILURES: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  LOGIN_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 900 }),
  /** Registrations per client address (each costs an argon2 hash). */
  REGISTRATION_MAX_PER_WINDOW: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  REGISTRATION_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 900 }),
  /** Shared store for the failed-login and registration counters when several identity processes run. */
  REDIS_URL: Type.Optional(Url()),
  /**
   * Comma-separated addresses or subnets (or Express's names: loopback, uniquelocal) whose X-Forwarded-For is
   * believed: the gateway. Anyone else is limited by their own socket address. Empty trusts nobody.
   */
  TRUSTED_PROXIES: Type.String({ default: 'loopback' }),
});

export type IdentityConfig = Static<typeof IdentityConfigSchema>;
