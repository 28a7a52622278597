import { Type, type Static } from '@sinclair/typebox';
import {
  BusConfig,
  CommonConfig,
  ConfigError,
  PortNumber,
  TokenConfig,
  TokenKeysConfig,
  Url,
} from '@payments/service-kit';
import { PAYMENT_PAGE_PROVIDERS, type PaymentPageSettings } from './domain/payment-page.js';

const Seconds = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, default: fallback, description });
const Count = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, default: fallback, description });
const Upstream = (fallback: string, service: string) =>
  Url({ default: fallback, description: `Where ${service} answers` });

export const GatewayConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(8080),
  GATEWAY_PORT: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 65535,
      description: 'Wins over PORT, so a launcher can give every process one environment',
    }),
  ),
  IDENTITY_URL: Upstream('http://127.0.0.1:3001', 'identity'),
  LEDGER_URL: Upstream('http://127.0.0.1:3002', 'the ledger'),
  CURRENCY_URL: Upstream('http://127.0.0.1:3003', 'currency'),
  WEBHOOK_INGEST_URL: Upstream('http://127.0.0.1:3004', 'webhook-ingest'),
  WEBHOOK_DELIVERY_URL: Upstream('http://127.0.0.1:3006', 'webhook-delivery'),
  ...TokenKeysConfig,
  ...TokenConfig,
  AMQP_URL: Type.Optional(
    Url({
      description: 'The broker revocation events arrive on; unset, revocations are reloaded from identity',
    }),
  ),
  AMQP_NAMESPACE: BusConfig.AMQP_NAMESPACE,
  REVOCATIONS_RELOAD_SECONDS: Seconds(
    15,
    'Without a bus (no AMQP_URL), how often the revocations in force are loaded again from identity',
  ),
  UPSTREAM_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 10_000,
    description:
      'How long a service may stay silent (connecting, or mid-answer) before the request is answered 503',
  }),
  UPSTREAM_MAX_SOCKETS: Type.Integer({
    minimum: 1,
    default: 256,
    description: 'Keep-alive connections to each service at most; further requests wait for a free one',
  }),
  MAX_BODY_BYTES: Type.Integer({
    minimum: 1,
    default: 1_048_576,
    description:
      'Larger bodies are answered 413: announced by Content-Length before they reach a service, chunked ones as they stream',
  }),
  RATE_LIMIT_ENABLED: Type.Boolean({
    default: true,
    description: 'Rate limits per client address and per user',
  }),
  RATE_LIMIT_ADDRESS_POINTS: Count(100, 'Requests per client address per window, provider webhooks aside'),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: Seconds(10, 'The per-address window'),
  RATE_LIMIT_WEBHOOK_POINTS: Count(
    1000,
    "Provider webhooks (`/webhook/*`) per sending address per window: a budget of their own, so that clients' " +
      "requests from an address never use up a provider's, nor its webhooks theirs",
  ),
  RATE_LIMIT_WEBHOOK_WINDOW_SECONDS: Seconds(10, 'The provider webhooks’ window'),
  RATE_LIMIT_USER_POINTS: Count(10_000, 'Requests per signed-in user per window'),
  RATE_LIMIT_USER_WINDOW_SECONDS: Seconds(86_400, 'The per-user window'),
  RATE_LIMIT_API_KEY_POINTS: Count(
    1000,
    'Requests per API key per window, besides its user’s allowance: one busy server never spends all of it',
  ),
  RATE_LIMIT_API_KEY_WINDOW_SECONDS: Seconds(10, 'The per-API-key window'),
  REDIS_URL: Type.Optional(
    Url({
      description: 'Shares the rate-limit counters between gateway processes; unset, each counts alone',
    }),
  ),
  RATE_LIMIT_KEY_PREFIX: Type.String({
    default: 'payments-gateway',
    pattern: '^[\\w.:-]+$',
    description: 'Prefix of the counters in Redis',
  }),
  TRUSTED_PROXIES: Type.String({
    default: '',
    description: 'Comma-separated addresses or subnets whose X-Forwarded-For is believed (an edge proxy)',
  }),
  CORS_ORIGINS: Type.String({
    default: '',
    description: 'Comma-separated origins allowed by CORS; empty turns CORS off',
  }),
  PAYMENT_PAGE_PROVIDER: Type.Optional(
    Type.Union(
      PAYMENT_PAGE_PROVIDERS.map((provider) => Type.Literal(provider)),
      {
        description:
          'Whom the payment page (`/pay/{transaction_id}`) has the payer pay: `sandbox` (its card form confirms at ' +
          'PAYMENT_PAGE_SANDBOX_URL with SANDBOX_PUBLISHABLE_KEY), `stripe` (Stripe.js with ' +
          'STRIPE_PUBLISHABLE_KEY) or `none`. Unset: `sandbox`, or with NODE_ENV=production `stripe` when ' +
          'PROVIDER=stripe and `none` otherwise',
      },
    ),
  ),
  PROVIDER: Type.Optional(
    Type.Union([Type.Literal('none'), Type.Literal('stripe')], {
      description:
        "The ledger's payment provider (the same variable): in production, PROVIDER=stripe makes the payment page " +
        "Stripe's unless PAYMENT_PAGE_PROVIDER says otherwise",
    }),
  ),
  STRIPE_PUBLISHABLE_KEY: Type.Optional(
    Type.String({
      pattern: '^pk_(test|live)_[A-Za-z0-9_]+$',
      description:
        "Stripe's publishable key, which Stripe.js on the payment page confirms payments with (public by design); " +
        'required when the page uses Stripe',
      production: 'required with PROVIDER=stripe unless PAYMENT_PAGE_PROVIDER is `sandbox` or `none`',
    }),
  ),
  SANDBOX_PUBLISHABLE_KEY: Type.String({
    pattern: '^pk_test_',
    default: 'pk_test_sandbox_development_only',
    description:
      "The provider sandbox's publishable key (its own SANDBOX_PUBLISHABLE_KEY), which the payment page confirms " +
      'with when the sandbox plays the provider; public by design',
  }),
  PAYMENT_PAGE_SANDBOX_URL: Url({
    default: 'http://127.0.0.1:3005',
    description:
      "The provider sandbox's API as a payer's browser reaches it (its published address, not the one the " +
      "ledger calls): the payment page confirms there, and the page's Content-Security-Policy allows it",
  }),
});

export type GatewayConfig = Static<typeof GatewayConfigSchema>;

/**
 * The payment page's provider (ADR 0128), checked once at start-up: Stripe needs its publishable key, and the
 * sandbox an http(s) origin.
 */
export function paymentPageSettingsOf(config: GatewayConfig): PaymentPageSettings {
  const production = config.NODE_ENV === 'production';
  const provider =
    config.PAYMENT_PAGE_PROVIDER ??
    (production ? (config.PROVIDER === 'stripe' ? 'stripe' : 'none') : 'sandbox');
  if (provider === 'none') return { provider };
  if (provider === 'stripe') {
    if (!config.STRIPE_PUBLISHABLE_KEY) {
      throw new ConfigError(
        'Invalid configuration: the payment page uses Stripe (PAYMENT_PAGE_PROVIDER=stripe, or PROVIDER=stripe ' +
          'with NODE_ENV=production) and needs STRIPE_PUBLISHABLE_KEY; PAYMENT_PAGE_PROVIDER=none turns the page off',
      );
    }
    return { provider, publishableKey: config.STRIPE_PUBLISHABLE_KEY };
  }
  const sandboxApiUrl = config.PAYMENT_PAGE_SANDBOX_URL;
  if (!/^https?:$/.test(URL.parse(sandboxApiUrl)?.protocol ?? '')) {
    throw new ConfigError(
      `Invalid configuration: PAYMENT_PAGE_SANDBOX_URL must be an http(s) address (got ${sandboxApiUrl})`,
    );
  }
  return { provider, publishableKey: config.SANDBOX_PUBLISHABLE_KEY, sandboxApiUrl };
}
