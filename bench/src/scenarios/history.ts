import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { createHttpClient } from '../harness/http-client.js';
import { createLatencySamples, runClosedLoop, type LatencySummary } from '../harness/load.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

const WARM_UP_SECONDS = 2;

export interface HistoryRun {
  /** Transactions the reading user owns when measured. */
  ownRows: number;
  /** Transactions in the ledger's table when measured. */
  tableRows: number;
  requestsPerSecond: number;
  requests: number;
  errors: number;
  latency: LatencySummary | null;
  cpu: CpuUsage | null;
}

export interface HistoryOptions {
  sizes: readonly number[];
  /** Clients reading pages back to back; one measures a page's own latency, without queueing. */
  clients: number;
}

/**
 * `GET /transactions` (first page, 20 rows) through the gateway for a user whose one account holds each size of
 * history in turn (completed deposits seeded in SQL), and at the largest size also for a user with a short one.
 */
export async function runHistory(
  context: BenchContext,
  options: HistoryOptions,
): Promise<{ sized: HistoryRun[]; short: HistoryRun }> {
  const { db, target, seconds, log } = context;
  const heavy = await signUp(target.gatewayUrl, 'history');
  const { id: heavyAccount } = await heavy.client.accounts.open({ currency: 'USD' });
  const light = await signUp(target.gatewayUrl, 'history_light');
  const { id: lightAccount } = await light.client.accounts.open({ currency: 'USD' });
  await db.seedHistory(lightAccount, 20);
  // Raw: the measured page reads; the client's per-call work and retries would distort them.
  const client = createHttpClient(target.gatewayUrl, 64);
  const tableRows = async () =>
    Number((await db.pool.query<{ count: string }>('SELECT count(*) FROM transactions')).rows[0]?.count);

  const pages = async (token: string, runSeconds: number) => {
    const samples = createLatencySamples();
    let errors = 0;
    let sent = 0;
    const elapsed = await runClosedLoop(options.clients, runSeconds * 1000, async () => {
      sent += 1;
      const begun = performance.now();
      const answer = await client
        .send({
          method: 'GET',
          path: '/transactions?limit=20',
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        })
        .catch(() => null);
      if (answer?.status === 200) samples.add(performance.now() - begun);
      else errors += 1;
    });
    return { requestsPerSecond: sent / (elapsed / 1000), requests: sent, errors, latency: samples.summary() };
  };

  const measure = async (ownRows: number, token: string): Promise<HistoryRun> => {
    const rows = await tableRows();
    await pages(token, WARM_UP_SECONDS);
    const before = await context.sampleCpu();
    const result = await pages(token, seconds);
    return { ownRows, tableRows: rows, ...result, cpu: cpuBetween(before, await context.sampleCpu()) };
  };

  try {
    const runs: HistoryRun[] = [];
    let seeded = 0;
    for (const size of options.sizes) {
      log(`history: seeding ${(size - seeded).toLocaleString('en-US')} completed deposits`);
      const started = Date.now();
      await db.seedHistory(
        heavyAccount,
        size - seeded,
        (done) => log(`  ${(seeded + done).toLocaleString('en-US')} rows`),
        seeded,
      );
      log(`history: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      seeded = size;
      runs.push(await measure(size, heavy.token));
    }
    return { sized: runs, short: await measure(20, light.token) };
  } finally {
    client.close();
  }
}
