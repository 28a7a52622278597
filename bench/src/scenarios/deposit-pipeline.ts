import { randomUUID } from 'node:crypto';
import { createEvent } from '@payments/contracts';
import { createAmqpBus, createLogger } from '@payments/service-kit';
import { openQueueSampler } from '../harness/broker-stats.js';
import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { createHttpClient } from '../harness/http-client.js';
import type { LedgerDatabase, PendingDeposit } from '../harness/ledger-db.js';
import { createLatencySamples, runClosedLoop, runPaced, sleep, summarize } from '../harness/load.js';
import { sendProviderEvent } from '../harness/provider-webhooks.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

export interface PipelineRun {
  /** Webhooks answered 200 per second while sending. */
  ingestPerSecond: number;
  /** Deposits credited per second, from the first webhook to the last credit. */
  creditedPerSecond: number;
  sent: number;
  credited: number;
  errors: number;
  /** Webhook sent → transaction completed (the ledger's completed_at), ms. */
  latency: ReturnType<typeof summarize>;
  /** Largest number of events waiting in the ledger's queue during the run. */
  maxQueueDepth: number;
  drainMs: number;
  /** CPU each process used from the first webhook to the last credit. */
  cpu: CpuUsage | null;
}

export interface PacedRun {
  rate: number;
  sent: number;
  credited: number;
  errors: number;
  /** Webhook sent → balance visible to a reader of the ledger database, ms (polled every POLL_MS). */
  latency: ReturnType<typeof summarize>;
  cpu: CpuUsage | null;
}

export interface LedgerAloneRun {
  published: number;
  credited: number;
  /** Deposits credited per second, from the first publish to the last credit. */
  creditedPerSecond: number;
  /** Published (broker confirm) → transaction completed, ms. */
  latency: ReturnType<typeof summarize>;
  cpu: CpuUsage | null;
}

export const POLL_MS = 5;
const DRAIN_TIMEOUT_MS = 120_000;

interface PipelineOptions {
  connections: number;
  /** Upper bound on the rate, used to seed enough pending deposits. */
  ceilingPerSecond: number;
  /** Send through the gateway instead of straight to webhook-ingest. */
  viaGateway: boolean;
}

async function prepareDeposits(context: BenchContext, count: number): Promise<PendingDeposit[]> {
  const user = await signUp(context.target.gatewayUrl, 'pipeline');
  const accounts = await context.db.seedFundedAccounts(user.userId, 1000, 0n);
  return context.db.seedPendingDeposits(accounts, count);
}

/** Sends the signed confirmation of a deposit; resolves with when it was sent if answered 200, else null. */
async function confirmDeposit(
  client: Parameters<typeof sendProviderEvent>[0],
  deposit: PendingDeposit,
  secret: string,
): Promise<number | null> {
  const started = Date.now();
  const answer = await sendProviderEvent(
    client,
    { transactionId: deposit.id, amount: deposit.amount },
    secret,
  ).catch(() => null);
  return answer?.status === 200 ? started : null;
}

/**
 * For deposits started at the given times (ms): how long each took until the ledger completed it (the clocks of
 * the bench and of PostgreSQL are the same machine's), and when the last one was completed (`from` if none was).
 */
async function creditTimes(db: LedgerDatabase, startedAt: Map<string, number>, from: number) {
  const outcomes = await db.outcomes([...startedAt.keys()]);
  const latencies: number[] = [];
  let lastCredit = from;
  for (const [id, started] of startedAt) {
    const completedAt = outcomes.get(id)?.completedAt;
    if (completedAt == null) continue;
    latencies.push(Math.max(0, completedAt - started));
    lastCredit = Math.max(lastCredit, completedAt);
  }
  return { latencies, lastCredit };
}

/** As many signed confirmations as the system takes for `seconds`, then waits until every one is credited. */
export async function runSaturatedPipeline(
  context: BenchContext,
  options: PipelineOptions,
): Promise<PipelineRun> {
  const { target, db, seconds } = context;
  const deposits = await prepareDeposits(context, Math.ceil(seconds * options.ceilingPerSecond));
  // Deposits someone else left pending (e.g. requested with nobody confirming) are not this run's to wait for.
  const othersPending = (await db.pendingCount('deposit')) - deposits.length;
  // Raw: the measured confirmations, the provider's webhooks (not an API operation the client covers).
  const client = createHttpClient(
    options.viaGateway ? target.gatewayUrl : target.webhookIngestUrl,
    options.connections,
  );
  const queue = await openQueueSampler(target.amqpUrl, target.amqpNamespace, 'ledger');
  const sentAt = new Map<string, number>();
  let next = 0;
  let errors = 0;
  let maxQueueDepth = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxQueueDepth = Math.max(maxQueueDepth, await queue.depth().catch(() => 0));
      await sleep(200);
    }
  })();
  try {
    const cpuBefore = await context.sampleCpu();
    const firstSend = Date.now();
    const elapsed = await runClosedLoop(options.connections, seconds * 1000, async () => {
      const deposit = deposits[next++];
      if (!deposit) return false;
      const started = await confirmDeposit(client, deposit, target.webhookSecret);
      if (started === null) errors += 1;
      else sentAt.set(deposit.id, started);
    });
    const sendEnd = Date.now();
    const leftPending = othersPending + deposits.length - sentAt.size;
    while ((await db.pendingCount('deposit')) > leftPending && Date.now() - sendEnd < DRAIN_TIMEOUT_MS)
      await sleep(50);
    const drainMs = Date.now() - sendEnd;
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());
    sampling = false;
    await sampler;
    const { latencies, lastCredit } = await creditTimes(db, sentAt, firstSend);
    return {
      ingestPerSecond: sentAt.size / (elapsed / 1000),
      creditedPerSecond: latencies.length / ((lastCredit - firstSend) / 1000),
      sent: sentAt.size,
      credited: latencies.length,
      errors: errors + (sentAt.size - latencies.length),
      latency: summarize(latencies),
      maxQueueDepth,
      drainMs,
      cpu,
    };
  } finally {
    sampling = false;
    await sampler;
    await queue.close();
    client.close();
  }
}

/**
 * Confirmations at a fixed rate; a poller reads the ledger database every POLL_MS and notes when each credit
 * becomes visible, so the latency is what a reader would see, within one poll.
 */
export async function runPacedPipeline(
  context: BenchContext,
  rate: number,
  options: PipelineOptions,
): Promise<PacedRun> {
  const { target, db, seconds } = context;
  const deposits = await prepareDeposits(context, Math.ceil(seconds * rate) + 10);
  // Raw: the measured confirmations, the provider's webhooks (not an API operation the client covers).
  const client = createHttpClient(options.viaGateway ? target.gatewayUrl : target.webhookIngestUrl, 64);
  const outstanding = new Map<string, number>();
  const latencies = createLatencySamples();
  let errors = 0;
  let polling = true;
  const poller = (async () => {
    while (polling || outstanding.size > 0) {
      const polledAt = Date.now();
      if (outstanding.size > 0) {
        for (const id of await db.completedAmong([...outstanding.keys()])) {
          latencies.add(polledAt - (outstanding.get(id) as number));
          outstanding.delete(id);
        }
      }
      await sleep(Math.max(0, POLL_MS - (Date.now() - polledAt)));
    }
  })();
  try {
    const cpuBefore = await context.sampleCpu();
    const sent = await runPaced(rate, seconds * 1000, async (index) => {
      const deposit = deposits[index];
      if (!deposit) return;
      const started = await confirmDeposit(client, deposit, target.webhookSecret);
      if (started === null) errors += 1;
      else outstanding.set(deposit.id, started);
    });
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (outstanding.size > 0 && Date.now() < deadline) await sleep(20);
    const lost = outstanding.size;
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());
    polling = false;
    outstanding.clear();
    await poller;
    return {
      rate,
      sent,
      credited: latencies.count(),
      errors: errors + lost,
      latency: latencies.summary(),
      cpu,
    };
  } finally {
    polling = false;
    outstanding.clear();
    await poller;
    client.close();
  }
}

/**
 * The ledger's share of the pipeline on its own: PaymentProcessed events published straight onto its queue, as
 * fast as the broker confirms them (at most `inFlight` unconfirmed), until every deposit is credited.
 */
export async function runLedgerAlone(
  context: BenchContext,
  count: number,
  inFlight = 200,
): Promise<LedgerAloneRun> {
  const { target, db } = context;
  const deposits = await prepareDeposits(context, count);
  const othersPending = (await db.pendingCount('deposit')) - deposits.length;
  const bus = createAmqpBus({
    url: target.amqpUrl,
    namespace: target.amqpNamespace,
    logger: createLogger('bench-publisher', 'warn'),
  });
  await bus.start();
  try {
    const cpuBefore = await context.sampleCpu();
    const firstPublish = Date.now();
    const publishedAt = new Map<string, number>();
    let next = 0;
    await runClosedLoop(inFlight, DRAIN_TIMEOUT_MS, async () => {
      const deposit = deposits[next++];
      if (!deposit) return false;
      const event = createEvent(
        'PaymentProcessed',
        {
          transaction_id: deposit.id,
          payment_id: deposit.id,
          status: 'completed',
          source: 'payment',
          amount: deposit.amount,
          currency: 'USD',
        },
        { id: randomUUID(), correlationId: `bench-${deposit.id}` },
      );
      await bus.publish(event);
      publishedAt.set(deposit.id, Date.now());
    });
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while ((await db.pendingCount('deposit')) > othersPending && Date.now() < deadline) await sleep(50);
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());
    const { latencies, lastCredit } = await creditTimes(db, publishedAt, firstPublish);
    return {
      published: publishedAt.size,
      credited: latencies.length,
      creditedPerSecond: latencies.length / ((lastCredit - firstPublish) / 1000),
      latency: summarize(latencies),
      cpu,
    };
  } finally {
    await bus.close();
  }
}
