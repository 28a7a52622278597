import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { createHttpClient } from '../harness/http-client.js';
import { runClosedLoop, sleep, summarize, type LatencySummary } from '../harness/load.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

export interface TransferRun {
  accounts: number;
  /** Transfers answered 202 per second while sending. */
  acceptedPerSecond: number;
  /** Transfers completed per second, from the first request to the last settlement. */
  settledPerSecond: number;
  accepted: number;
  settled: number;
  /** Requests not answered 202, plus accepted transfers that did not complete. */
  errors: number;
  /** Request sent → transfer completed (the ledger's completed_at), ms. */
  latency: LatencySummary | null;
  cpu: CpuUsage | null;
}

const FUNDS = 1_000_000_000n; // 10,000,000.00 USD per account: no transfer runs short
const SETTLE_TIMEOUT_MS = 120_000;

/** Random transfers between the accounts of one user, through the gateway, until every accepted one settled. */
export async function runTransfers(
  context: BenchContext,
  accounts: number,
  connections: number,
): Promise<TransferRun> {
  const { db, target, seconds } = context;
  const user = await signUp(target.gatewayUrl, 'transfers');
  const ids = await db.seedFundedAccounts(user.userId, accounts, FUNDS);
  // Raw: the measured transfers; the client's per-call work and retries would distort them.
  const client = createHttpClient(target.gatewayUrl, connections);
  const sentAt = new Map<string, number>();
  let rejected = 0;
  const pick = () => ids[Math.floor(Math.random() * ids.length)] as string;
  try {
    const cpuBefore = await context.sampleCpu();
    const firstSend = Date.now();
    const elapsed = await runClosedLoop(connections, seconds * 1000, async () => {
      const from = pick();
      let to = pick();
      while (to === from) to = pick();
      const started = Date.now();
      const body = JSON.stringify({
        amount: (1 + Math.floor(Math.random() * 9999)) / 100,
        currency: 'USD',
        to_account_id: to,
      });
      const answer = await client
        .send({
          method: 'POST',
          path: `/account/${from}/transfer`,
          headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
          body,
        })
        .catch(() => null);
      if (answer?.status === 202) sentAt.set((JSON.parse(answer.body) as { id: string }).id, started);
      else rejected += 1;
    });
    const sendEnd = Date.now();
    while ((await db.pendingCount('transfer')) > 0 && Date.now() - sendEnd < SETTLE_TIMEOUT_MS)
      await sleep(50);
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());
    const outcomes = await db.outcomes([...sentAt.keys()]);
    const latencies: number[] = [];
    let lastSettled = firstSend;
    for (const [id, sent] of sentAt) {
      const completedAt = outcomes.get(id)?.completedAt;
      if (completedAt == null) continue;
      latencies.push(completedAt - sent);
      lastSettled = Math.max(lastSettled, completedAt);
    }
    return {
      accounts,
      acceptedPerSecond: sentAt.size / (elapsed / 1000),
      settledPerSecond: latencies.length / ((lastSettled - firstSend) / 1000),
      accepted: sentAt.size,
      settled: latencies.length,
      errors: rejected + (sentAt.size - latencies.length),
      latency: summarize(latencies),
      cpu,
    };
  } finally {
    client.close();
  }
}
