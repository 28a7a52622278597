import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { createHttpClient } from '../harness/http-client.js';
import { createWorkPool, runClosedLoop, sleep, summarize, type LatencySummary } from '../harness/load.js';
import { receiveProviderRequests, type MoneyRequest } from '../harness/provider-requests.js';
import {
  deliverProviderEvent,
  depositConfirmationOf,
  providerEventBody,
} from '../harness/provider-webhooks.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

export interface FlowOptions {
  /** Clients requesting deposits through the gateway, back to back. */
  connections: number;
  /** One user's accounts the deposits are spread over, round robin. */
  accounts: number;
  /** Webhook deliveries the provider has in flight at most. */
  providerConnections: number;
  /** The provider sends its webhooks through the gateway instead of straight to webhook-ingest. */
  viaGateway: boolean;
}

export interface DepositRequestsRun {
  /** Requests answered 202 per second while sending. */
  acceptedPerSecond: number;
  accepted: number;
  /** Requests not answered 202. */
  rejected: number;
  /** Request sent → 202, ms. */
  latency: LatencySummary | null;
  /** Accepted deposits whose DepositRequested the broker confirmed (the ledger's outbox marked it published). */
  published: number;
  /** From the first request until every accepted deposit's DepositRequested was in the provider's queue. */
  cpu: CpuUsage | null;
}

export interface DepositFlowRun {
  /** Requests answered 202 per second while sending. */
  acceptedPerSecond: number;
  /** Deposits completed per second, from the first request to the last completed_at. */
  completedPerSecond: number;
  accepted: number;
  rejected: number;
  /** DepositRequested events the provider received (first deliveries), and redeliveries it ignored. */
  handedToProvider: number;
  redeliveries: number;
  /** Confirmations answered 200, HTTP attempts for them, and confirmations given up after retrying. */
  confirmed: number;
  webhookAttempts: number;
  abandoned: number;
  completed: number;
  /** Accepted deposits that ended failed, and those still pending when the bench stopped waiting. */
  failed: number;
  pending: number;
  /** Requests not answered 202, plus accepted deposits not completed. */
  errors: number;
  /** Request sent → transaction completed (the ledger's completed_at), ms. */
  latency: LatencySummary | null;
  /** Where the time goes, per deposit, ms. */
  stages: {
    /** Request sent → 202. */
    accepted: LatencySummary | null;
    /** Request sent → DepositRequested at the provider (the ledger's outbox relay and the broker). */
    handedToProvider: LatencySummary | null;
    /** DepositRequested at the provider → webhook answered 200 (queueing at the provider included). */
    confirmed: LatencySummary | null;
    /** Webhook answered 200 → completed_at (PaymentProcessed through the broker, the ledger's consumer). */
    credited: LatencySummary | null;
  };
  /** Last request → last deposit completed. */
  drainMs: number;
  cpu: CpuUsage | null;
}

const DRAIN_TIMEOUT_MS = 120_000;
/** How long accepted deposits' DepositRequested may take to reach the broker once the requests stop. */
const PUBLISH_TIMEOUT_MS = 30_000;

interface Accepted {
  id: string;
  sentAt: number;
  acceptedAt: number;
}

interface Depositor {
  /** One deposit request through the gateway: the accepted transaction, or null if not answered 202. */
  request(): Promise<Accepted | null>;
  close(): void;
}

/** A user with `accounts` USD accounts (seeded, so setting up costs nothing measured), depositing into them. */
async function openDepositor(context: BenchContext, options: FlowOptions): Promise<Depositor> {
  const { db, target } = context;
  const user = await signUp(target.gatewayUrl, 'flow');
  const accounts = await db.seedFundedAccounts(user.userId, options.accounts, 0n);
  // Raw: the measured deposit requests; the client's per-call work and retries would distort them.
  const client = createHttpClient(target.gatewayUrl, options.connections);
  const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' };
  let next = 0;
  return {
    async request() {
      const account = accounts[next++ % accounts.length] as string;
      // 1.00 to 999.99 USD.
      const amount = (100 + Math.floor(Math.random() * 99_900)) / 100;
      const sentAt = Date.now();
      const answer = await client
        .send({
          method: 'POST',
          path: `/account/${account}/deposit`,
          headers,
          body: JSON.stringify({ amount, currency: 'USD' }),
        })
        .catch(() => null);
      if (answer?.status !== 202) return null;
      return { id: (JSON.parse(answer.body) as { id: string }).id, sentAt, acceptedAt: Date.now() };
    },
    close: () => client.close(),
  };
}

/**
 * The request side alone: closed-loop deposit requests through the gateway for `seconds`, nobody confirming (the
 * provider sandbox is off). CPU runs until every accepted deposit's DepositRequested reached the broker, since
 * publishing it is part of accepting.
 */
export async function runDepositRequests(
  context: BenchContext,
  options: FlowOptions,
): Promise<DepositRequestsRun> {
  const { db, seconds } = context;
  const depositor = await openDepositor(context, options);
  const latencies: number[] = [];
  let rejected = 0;
  try {
    const cpuBefore = await context.sampleCpu();
    const elapsed = await runClosedLoop(options.connections, seconds * 1000, async () => {
      const accepted = await depositor.request();
      if (accepted) latencies.push(accepted.acceptedAt - accepted.sentAt);
      else rejected += 1;
    });
    const deadline = Date.now() + PUBLISH_TIMEOUT_MS;
    let unpublished = await db.unpublishedCount();
    while (unpublished > 0 && Date.now() < deadline) {
      await sleep(50);
      unpublished = await db.unpublishedCount();
    }
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());
    return {
      acceptedPerSecond: latencies.length / (elapsed / 1000),
      accepted: latencies.length,
      rejected,
      latency: summarize(latencies),
      published: Math.max(0, latencies.length - unpublished),
      cpu,
    };
  } finally {
    depositor.close();
  }
}

interface FlowTimes {
  sentAt?: number;
  acceptedAt?: number;
  receivedAt?: number;
  confirmedAt?: number;
}

/**
 * The whole deposit: requested through the gateway (202), DepositRequested on the broker, received by the bench
 * playing the provider on a queue of its own, confirmed with a signed payment_intent.succeeded for the requested
 * amount and currency (once per deposit; a non-200 answer is retried as a provider does), credited by the ledger.
 * Requests run for `seconds`; then the bench waits until every accepted deposit is confirmed and completed.
 */
export async function runDepositFlow(context: BenchContext, options: FlowOptions): Promise<DepositFlowRun> {
  const { target, db, seconds } = context;
  const depositor = await openDepositor(context, options);
  // Raw: the provider's webhooks, part of the measured flow (and not an API operation the client covers).
  const webhooks = createHttpClient(
    options.viaGateway ? target.gatewayUrl : target.webhookIngestUrl,
    options.providerConnections,
  );
  const times = new Map<string, FlowTimes>();
  const timesOf = (id: string) => {
    let entry = times.get(id);
    if (!entry) times.set(id, (entry = {}));
    return entry;
  };
  let giveUpAt = Infinity;
  let confirmed = 0;
  let webhookAttempts = 0;
  let abandoned = 0;
  const provider = createWorkPool<MoneyRequest>(options.providerConnections, async (request) => {
    // Past the drain timeout (or torn down): what is still waiting is abandoned, not sent.
    if (Date.now() > giveUpAt) {
      abandoned += 1;
      return;
    }
    const body = providerEventBody(depositConfirmationOf(request));
    const delivery = await deliverProviderEvent(webhooks, body, target.webhookSecret, () => giveUpAt);
    webhookAttempts += delivery.attempts;
    if (!delivery.delivered) {
      abandoned += 1;
      return;
    }
    confirmed += 1;
    timesOf(request.transactionId).confirmedAt = Date.now();
  });
  const requests = await receiveProviderRequests(
    target.amqpUrl,
    target.amqpNamespace,
    ['DepositRequested'],
    (request) => {
      timesOf(request.transactionId).receivedAt = request.receivedAt;
      provider.push(request);
    },
  );
  const accepted: string[] = [];
  let rejected = 0;
  try {
    const othersPending = await db.pendingCount('deposit');
    const cpuBefore = await context.sampleCpu();
    const firstSend = Date.now();
    const elapsed = await runClosedLoop(options.connections, seconds * 1000, async () => {
      const answer = await depositor.request();
      if (!answer) {
        rejected += 1;
        return;
      }
      accepted.push(answer.id);
      Object.assign(timesOf(answer.id), { sentAt: answer.sentAt, acceptedAt: answer.acceptedAt });
    });
    const sendEnd = Date.now();
    giveUpAt = sendEnd + DRAIN_TIMEOUT_MS;
    // Every accepted deposit handed to the provider and answered (or given up on)…
    while (
      (requests.ids().size < accepted.length || provider.size() > 0) &&
      Date.now() - sendEnd < DRAIN_TIMEOUT_MS
    )
      await sleep(20);
    // …then credited: what stays pending is what the provider never confirmed.
    const unconfirmed = abandoned + accepted.filter((id) => !requests.ids().has(id)).length + provider.size();
    while (
      (await db.pendingCount('deposit')) > othersPending + unconfirmed &&
      Date.now() - sendEnd < DRAIN_TIMEOUT_MS
    )
      await sleep(50);
    const drainMs = Date.now() - sendEnd;
    const cpu = cpuBetween(cpuBefore, await context.sampleCpu());

    const outcomes = await db.outcomes(accepted);
    const latencies: number[] = [];
    const stages = {
      accepted: [] as number[],
      handed: [] as number[],
      confirmed: [] as number[],
      credited: [] as number[],
    };
    let lastCompleted = firstSend;
    let failed = 0;
    let pending = 0;
    for (const id of accepted) {
      const outcome = outcomes.get(id);
      const at = times.get(id) as FlowTimes;
      const sentAt = at.sentAt as number;
      stages.accepted.push((at.acceptedAt as number) - sentAt);
      if (at.receivedAt !== undefined) {
        stages.handed.push(Math.max(0, at.receivedAt - sentAt));
        if (at.confirmedAt !== undefined) stages.confirmed.push(at.confirmedAt - at.receivedAt);
      }
      if (outcome?.status === 'failed') failed += 1;
      if (outcome?.status === 'pending') pending += 1;
      const completedAt = outcome?.status === 'completed' ? outcome.completedAt : null;
      if (completedAt == null) continue;
      latencies.push(Math.max(0, completedAt - sentAt));
      if (at.confirmedAt !== undefined) stages.credited.push(Math.max(0, completedAt - at.confirmedAt));
      lastCompleted = Math.max(lastCompleted, completedAt);
    }
    return {
      acceptedPerSecond: accepted.length / (elapsed / 1000),
      completedPerSecond: latencies.length / ((lastCompleted - firstSend) / 1000),
      accepted: accepted.length,
      rejected,
      handedToProvider: requests.ids().size,
      redeliveries: requests.redeliveries(),
      confirmed,
      webhookAttempts,
      abandoned,
      completed: latencies.length,
      failed,
      pending,
      errors: rejected + (accepted.length - latencies.length),
      latency: summarize(latencies),
      stages: {
        accepted: summarize(stages.accepted),
        handedToProvider: summarize(stages.handed),
        confirmed: summarize(stages.confirmed),
        credited: summarize(stages.credited),
      },
      drainMs,
      cpu,
    };
  } finally {
    giveUpAt = 0;
    await requests.close();
    await provider.drained();
    webhooks.close();
    depositor.close();
  }
}
