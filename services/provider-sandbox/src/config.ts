import { Type, type Static } from '@sinclair/typebox';
import { BusConfig, CommonConfig, DEVELOPMENT_WEBHOOK_SECRET, PortNumber, Url } from '@payments/service-kit';

export const ProviderSandboxConfigSchema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3005),
  ...BusConfig,
  WEBHOOK_INGEST_URL: Url('http://127.0.0.1:3004'),
  /** Defaults to on outside production; production never runs the sandbox, whatever this says. */
  SANDBOX_ENABLED: Type.Optional(Type.Boolean()),
  SANDBOX_DELAY_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 500 }),
  /** Sends every provider event twice, to exercise deduplication downstream. */
  SANDBOX_DUPLICATE_DELIVERY: Type.Boolean({ default: false }),
  SANDBOX_WEBHOOK_SECRET: Type.String({ minLength: 1, default: DEVELOPMENT_WEBHOOK_SECRET }),
});

export type ProviderSandboxConfig = Static<typeof ProviderSandboxConfigSchema>;

export type SandboxMode = { enabled: true } | { enabled: false; reason: string };

/** A stand-in that confirms every payment must never run where real money moves. */
export function sandboxMode(config: ProviderSandboxConfig): SandboxMode {
  if (config.NODE_ENV === 'production') {
    return { enabled: false, reason: 'the provider sandbox never runs with NODE_ENV=production' };
  }
  if (config.SANDBOX_ENABLED === false) return { enabled: false, reason: 'SANDBOX_ENABLED=false' };
  return { enabled: true };
}
