import Stripe from 'stripe';
import type { TestSystem } from '@payments/testkit';

/** stripe-node against a test system's provider sandbox, as the ledger talks to it: the Stripe a test plays with. */
export function sandboxStripe(system: TestSystem): Stripe {
  const sandbox = new URL(system.urls['provider-sandbox']);
  return new Stripe(system.sandboxApiKey, {
    host: sandbox.hostname,
    port: Number(sandbox.port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
}
