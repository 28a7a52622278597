import { createLogger, createMemoryBus, loadConfig } from '@payments/service-kit';
import { closedPort } from '@payments/testkit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '@payments/provider-sandbox';

/** The key the ledger's Stripe adapter calls the sandbox with. */
export const SANDBOX_KEY = 'sk_test_ledger_sandbox';
const silent = createLogger('ledger-test-sandbox', 'silent');

/**
 * The provider sandbox serving Stripe's API to the ledger's adapter, nothing paid unless the test pays it, its
 * events sent nowhere (a closed port).
 */
export async function startStripeSandbox(env: Record<string, string> = {}) {
  const config = loadConfig(ProviderSandboxConfigSchema, {
    PORT: '0',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    WEBHOOK_INGEST_URL: `http://127.0.0.1:${await closedPort()}`,
    SANDBOX_API_KEY: SANDBOX_KEY,
    SANDBOX_ENABLED: 'true',
    SANDBOX_AUTO_CONFIRM: 'false',
    ...env,
  });
  const bus = createMemoryBus(silent, { deployment: { sandbox: true } });
  const service = await startProviderSandbox(config, { bus, logger: silent });
  return {
    url: service.url,
    async stop() {
      await service.stop();
      await bus.close();
    },
  };
}
