import Stripe from 'stripe';
import type { TestSystem, TestSystemOptions } from '@payments/testkit';
import { createHttpClient, type HttpClient } from '../harness/http-client.js';
import { openLedgerDatabase, type LedgerDatabase } from '../harness/ledger-db.js';
import { startTarget, type Target } from '../harness/target.js';

/** A system a drill started for itself, and what every drill reaches it through. */
export interface DrillSystem {
  target: Target;
  system: TestSystem;
  /** Raw HTTP through the gateway. */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  /** stripe-node against the system's provider sandbox, retrying as a careful integration would. */
  stripe: Stripe;
  /** Closes the clients, then stops the system. */
  stop(): Promise<void>;
}

export async function startDrillSystem(
  drill: string,
  options: TestSystemOptions & { gatewaySockets: number },
): Promise<DrillSystem> {
  const { gatewaySockets, ...systemOptions } = options;
  const target = await startTarget(systemOptions);
  const system = target.system;
  if (!system) throw new Error(`the ${drill} needs a system it started itself`);
  const sandbox = new URL(system.urls['provider-sandbox']);
  const gateway = createHttpClient(target.gatewayUrl, gatewaySockets);
  const ledgerDb = openLedgerDatabase(target.ledgerDatabaseUrl);
  return {
    target,
    system,
    gateway,
    ledgerDb,
    stripe: new Stripe(system.sandboxApiKey, {
      host: sandbox.hostname,
      port: Number(sandbox.port),
      protocol: 'http',
      maxNetworkRetries: 3,
    }),
    async stop() {
      gateway.close();
      await ledgerDb.close();
      await target.stop();
    },
  };
}
