import { Type, type Static } from '@sinclair/typebox';
import { BusConfig, CommonConfig, PortNumber, TokenConfig, Url } from '@payments/service-kit';

const Seconds = (fallback: number) => Type.Integer({ minimum: 1, default: fallback });
const Count = (fallback: number) => Type.Integer({ minimum: 1, default: fallback });

export const GatewayConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(8080),
  /** Wins over PORT, so a launcher can give every process one environment. */
  GATEWAY_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  IDENTITY_URL: Url('http://127.0.0.1:3001'),
  LEDGER_URL: Url('http://127.0.0.1:3002'),
  CURRENCY_URL: Url('http://127.0.0.1:3003'),
  WEBHOOK_INGEST_URL: Url('http://127.0.0.1:3004'),
  WEBHOOK_DELIVERY_URL: Url('http://127.0.0.1:3006'),
  /** Defaults to identity's `/.well-known/jwks.json`. */
  JWKS_URL: Type.Optional(Url()),
  ...TokenConfig,
  /** Revocation events arrive over the bus only when one is configured (or injected). */
  AMQP_URL: Type.Optional(Url()),
  AMQP_NAMESPACE: BusConfig.AMQP_NAMESPACE,
  /** Without a bus (no AMQP_URL), how often the revocations in force are loaded again from identity. */
  REVOCATIONS_RELOAD_SECONDS: Seconds(15),
  /** How long a service may stay silent (connecting, or mid-answer) before the request is answered 503. */
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000 }),
  /** Keep-alive connections to each service at most; further requests wait for a free one. */
  UPSTREAM_MAX_SOCKETS: Type.Integer({ minimum: 1, default: 256 }),
  /** Larger bodies are refused: announced by Content-Length before they reach a service, chunked ones as they stream. */
  MAX_BODY_BYTES: Type.Integer({ minimum: 1, default: 1_048_576 }),
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true }),
  RATE_LIMIT_ADDRESS_POINTS: Count(100),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: Seconds(10),
  RATE_LIMIT_USER_POINTS: Count(10_000),
  RATE_LIMIT_USER_WINDOW_SECONDS: Seconds(86_400),
  /** Shares the counters between gateway processes. */
  REDIS_URL: Type.Optional(Url()),
  RATE_LIMIT_KEY_PREFIX: Type.String({ default: 'payments-gateway', pattern: '^[\\w.:-]+$' }),
  /** Comma-separated addresses or subnets whose X-Forwarded-For is believed. */
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** Comma-separated origins allowed by CORS; empty turns CORS off. */
  CORS_ORIGINS: Type.String({ default: '' }),
});

export type GatewayConfig = Static<typeof GatewayConfigSchema>;
