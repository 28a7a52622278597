import { Type, type Static } from '@sinclair/typebox';
import { MAX_API_KEY_TOKEN_TTL_SECONDS } from '@payments/contracts';
import { ConfigError, DatabaseServiceConfig, TokenConfig, Url } from '@payments/service-kit';
import type { LoginThrottleOptions } from './data/login-throttle.js';

/** No token lives longer than this whatever TOKEN_TTL_SECONDS was when it was issued (user-wide revocations last as long). */
export const MAX_TOKEN_TTL_SECONDS = 86_400;

export { MAX_API_KEY_TOKEN_TTL_SECONDS } from '@payments/contracts';

const Optional = (description: string, production?: string) =>
  Type.Optional(Type.String({ minLength: 1, description, ...(production ? { production } : {}) }));

export const IdentityConfigSchema = Type.Object({
  ...DatabaseServiceConfig(3001, 'payments_identity', 'identity'),
  ...TokenConfig,
  LEDGER_URL: Url({
    default: 'http://127.0.0.1:3002',
    description:
      "The ledger, which closes a user's accounts (refusing while they hold money) before the user is deleted",
  }),
  TOKEN_TTL_SECONDS: Type.Integer({
    minimum: 30,
    maximum: MAX_TOKEN_TTL_SECONDS,
    default: 900,
    description: 'How long an access token lasts',
  }),
  SESSION_MAX_SECONDS: Type.Integer({
    minimum: 30,
    maximum: 2_592_000,
    default: 43_200,
    description:
      'How long a session lasts from its login, across refreshes (`auth_time`); then the user logs in again',
  }),
  JWT_PRIVATE_KEY: Optional(
    'PEM of the EC P-256 key that signs tokens; literal "\\n" sequences are accepted for one-line environments. ' +
      'Elsewhere one is generated once under DATA_DIR',
    'this or JWT_PRIVATE_KEY_FILE is required',
  ),
  JWT_PRIVATE_KEY_FILE: Optional('A file holding that PEM', 'this or JWT_PRIVATE_KEY is required'),
  JWT_PREVIOUS_PUBLIC_KEYS_FILE: Optional(
    'PEM public keys of retired signing keys, still listed in the JWKS until their tokens expire',
  ),
  DATA_DIR: Type.String({
    default: '.data',
    minLength: 1,
    description:
      'Where development state lives (the generated signing key), relative to the working directory',
  }),
  ADMIN_USERNAME: Optional('With ADMIN_EMAIL and ADMIN_PASSWORD: an admin user made (or kept) at start'),
  ADMIN_EMAIL: Optional("The start-up admin's email"),
  ADMIN_PASSWORD: Optional("The start-up admin's password"),
  LOGIN_MAX_FAILURES: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 10,
    description:
      'Failed logins (and wrong current passwords) of one account from one client address in a window, then 429 ' +
      'for that account from that address before any further password is checked; right passwords do not count, ' +
      'and one starts the count over. Other addresses are not affected',
  }),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: Type.Integer({
    minimum: 2,
    maximum: 1_000_000,
    default: 100,
    description:
      'Failed logins of one account from all addresses together in a window, then 429 for that account: stops a ' +
      'guess spread over many addresses. Must be above LOGIN_MAX_FAILURES, so that no one address can reach it',
  }),
  LOGIN_MAX_FAILURES_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 100,
    description:
      'Failed logins from one client address over all accounts in a window, then 429 for that address: stops a ' +
      'password sprayed over many accounts. Raise it for an address that many users share',
  }),
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 500,
    description:
      'Logins per client address in a window, right or wrong, then 429: the ceiling on a flood from one address ' +
      '(each costs an argon2 hash). Raise it for an address that many users share, such as a carrier gateway',
  }),
  LOGIN_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 900,
    description: 'The window of every login limit',
  }),
  REGISTRATION_MAX_PER_WINDOW: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10,
    description: 'Registrations per client address in a window (each costs an argon2 hash)',
  }),
  REGISTRATION_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 900,
    description: 'The registration window',
  }),
  API_KEY_MODE: Type.Optional(
    Type.Union([Type.Literal('live'), Type.Literal('test')], {
      description:
        'Whether new API keys are live (`sk_live_…`) or test (`sk_test_…`) keys; unset: live with ' +
        'NODE_ENV=production, else test',
    }),
  ),
  API_KEY_TOKEN_TTL_SECONDS: Type.Integer({
    minimum: 30,
    maximum: MAX_API_KEY_TOKEN_TTL_SECONDS,
    default: 300,
    description:
      'How long the token the gateway exchanges an API key for lasts (the gateway keeps it that long at most)',
  }),
  REDIS_URL: Type.Optional(
    Url({
      description: 'Shares the login and registration counters when several identity processes run',
    }),
  ),
  TRUSTED_PROXIES: Type.String({
    default: 'loopback',
    description:
      "Comma-separated addresses or subnets (or Express's names: loopback, uniquelocal) whose X-Forwarded-For is " +
      'believed: the gateway. Anyone else is limited by their own socket address. Empty trusts nobody',
  }),
});

export type IdentityConfig = Static<typeof IdentityConfigSchema>;

/** The login limits, refused at start when one client address could use up an account's failures by itself. */
export function loginLimits(config: IdentityConfig): LoginThrottleOptions {
  if (config.LOGIN_MAX_FAILURES_PER_ACCOUNT <= config.LOGIN_MAX_FAILURES) {
    throw new ConfigError(
      `Invalid configuration: LOGIN_MAX_FAILURES_PER_ACCOUNT (${config.LOGIN_MAX_FAILURES_PER_ACCOUNT}) must be ` +
        `above LOGIN_MAX_FAILURES (${config.LOGIN_MAX_FAILURES}), or one address could lock an account's owner out`,
    );
  }
  return {
    maxFailures: config.LOGIN_MAX_FAILURES,
    maxFailuresPerAccount: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    maxFailuresPerAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
    maxAttemptsPerAddress: config.LOGIN_MAX_ATTEMPTS_PER_ADDRESS,
    windowSeconds: config.LOGIN_WINDOW_SECONDS,
  };
}
