import type { HttpClient } from '../harness/http-client.js';
import { runPaced, sleep } from '../harness/load.js';
import {
  postProviderEvent,
  providerEventBody,
  type DepositConfirmation,
} from '../harness/provider-webhooks.js';

export interface StormResult {
  deliveries: number;
  attempts: number;
  /** Deliveries finally answered 200. */
  answered: number;
  /** Deliveries still not answered 200 when the sender gave up. */
  abandoned: number;
  /** Answers by status ("network" for a failed connection). */
  statuses: Record<string, number>;
  /** The transactions whose confirmations were answered 200 at least once. */
  confirmed: Set<string>;
}

export interface StormOptions {
  /** Deliveries started per second (each then retries on its own). */
  rate: number;
  /** The sender stops retrying at this time (ms since epoch). */
  giveUpAt: number;
}

/**
 * Sends each confirmation as a provider does: at a steady rate, and on anything but a 200 again after a growing
 * pause, with the same event body and a fresh signature, until it is answered 200 or the sender gives up.
 */
export async function sendStorm(
  client: HttpClient,
  secret: string,
  confirmations: readonly DepositConfirmation[],
  options: StormOptions,
): Promise<StormResult> {
  const result: StormResult = {
    deliveries: confirmations.length,
    attempts: 0,
    answered: 0,
    abandoned: 0,
    statuses: {},
    confirmed: new Set(),
  };
  const count = (status: string) => (result.statuses[status] = (result.statuses[status] ?? 0) + 1);
  const deliver = async (confirmation: DepositConfirmation) => {
    const body = providerEventBody(confirmation);
    for (let attempt = 0; ; attempt += 1) {
      result.attempts += 1;
      const answer = await postProviderEvent(client, body, secret).catch(() => null);
      count(answer ? String(answer.status) : 'network');
      if (answer?.status === 200) {
        result.answered += 1;
        result.confirmed.add(confirmation.transactionId);
        return;
      }
      const pause = Math.min(100 * 2 ** attempt, 2000) * (0.5 + Math.random());
      if (Date.now() + pause > options.giveUpAt) {
        result.abandoned += 1;
        return;
      }
      await sleep(pause);
    }
  };
  await runPaced(
    options.rate,
    Infinity,
    (index) => deliver(confirmations[index] as DepositConfirmation),
    confirmations.length,
  );
  return result;
}
