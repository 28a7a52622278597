import { randomUUID } from 'node:crypto';
import { sleep } from '../harness/load.js';
import type { DepositConfirmation } from '../harness/provider-webhooks.js';
import { signUp } from '../harness/users.js';
import { repeatFault } from './bank-drill.js';
import { checkBooks, unpublishedWebhooks, waitSettled } from './books.js';
import { completedDepositTotals } from './drill-queries.js';
import type { DrillContext, DrillReport } from './drill-context.js';
import { sendStorm, type StormResult } from './webhook-storm.js';

const ACCOUNTS = 10;

/** Pending deposits on fresh accounts of a new user, seeded as if each had just been accepted. */
async function pendingDeposits(context: DrillContext, count: number) {
  const user = await signUp(context.target.gatewayUrl, 'storm');
  const accountIds = await context.ledgerDb.seedFundedAccounts(user.userId, ACCOUNTS, 0n);
  const deposits = await context.ledgerDb.seedPendingDeposits(accountIds, count);
  return { accountIds, deposits };
}

function stormOperations(storm: StormResult): Record<string, number> {
  return {
    'webhook deliveries': storm.deliveries,
    'HTTP attempts (with retries)': storm.attempts,
    ...Object.fromEntries(Object.entries(storm.statuses).map(([status, n]) => [`answered ${status}`, n])),
    'deliveries abandoned by the sender': storm.abandoned,
  };
}

async function settleAndCheck(
  context: DrillContext,
  accountIds: string[],
  storm: StormResult,
  confirmationsAllSucceed: boolean,
) {
  await waitSettled(context, accountIds, context.settleSeconds * 1000);
  const deposits = await completedDepositTotals(context, accountIds);
  const checks = await checkBooks(context, {
    accountIds,
    expectedTotalMinor: deposits.creditedMinor,
    confirmed: storm.confirmed,
    confirmationsAllSucceed,
  });
  const unpublished = await unpublishedWebhooks(context);
  checks.push(
    {
      name: 'no webhook event left recorded but unpublished',
      ok: unpublished === 0,
      detail: `${unpublished} in webhook-ingest's table`,
      discrepancies: unpublished,
    },
    {
      name: 'the sender got a 200 for every delivery',
      ok: storm.abandoned === 0,
      detail: `${storm.abandoned} abandoned after retrying`,
      discrepancies: storm.abandoned,
    },
  );
  return { deposits, checks };
}

/**
 * RabbitMQ unreachable from webhook-ingest (the TCP proxy between them cut) for part of a webhook storm whose
 * sender retries every answer but 200.
 */
export async function runBrokerOutageDrill(
  context: DrillContext,
  rate: number,
  outageSeconds: number,
): Promise<DrillReport> {
  const { seconds, brokerProxy, target, gateway, log } = context;
  if (!brokerProxy)
    throw new Error('the broker outage drill needs a system it started (a TCP proxy to RabbitMQ)');
  const started = Date.now();
  const { accountIds, deposits } = await pendingDeposits(context, rate * seconds);
  const confirmations = deposits.map((d) => ({ transactionId: d.id, amount: d.amount }));
  log(
    `broker outage drill: ${rate} webhooks/s for ${seconds} s; RabbitMQ cut off for ${outageSeconds} s in the middle`,
  );
  const outage = (async () => {
    await sleep(((seconds - outageSeconds) / 2) * 1000);
    brokerProxy.cut();
    await sleep(outageSeconds * 1000);
    brokerProxy.restore();
  })();
  const storm = await sendStorm(gateway, target.webhookSecret, confirmations, {
    rate,
    giveUpAt: Date.now() + (seconds + context.settleSeconds) * 1000,
  });
  await outage;
  const { deposits: credited, checks } = await settleAndCheck(context, accountIds, storm, true);
  return {
    name: 'RabbitMQ unreachable during a webhook storm',
    injected: [
      `webhook-ingest ↔ RabbitMQ cut for ${outageSeconds} s (TCP proxy: open connections reset, new ones refused ${brokerProxy.refused()} times)`,
    ],
    operations: { ...stormOperations(storm), 'deposits credited': credited.count },
    faults: 1,
    moneyMovedMinor: credited.creditedMinor,
    checks,
    durationMs: Date.now() - started,
  };
}

const BURST = 100;
const BURST_WAIT_MS = 2000;
const CAUGHT_WANTED = 10;

/**
 * webhook-ingest killed with SIGKILL during a storm. Each kill comes during a burst of concurrent deliveries, the
 * moment its database shows events recorded but not yet published, so the kill lands between the two steps.
 */
export async function runIngestCrashDrill(
  context: DrillContext,
  rate: number,
  killEverySeconds: number,
): Promise<DrillReport> {
  const { seconds, system, target, gateway, log } = context;
  const started = Date.now();
  const kills = Math.max(1, Math.floor((seconds - killEverySeconds / 2) / killEverySeconds) + 1);
  const { accountIds, deposits } = await pendingDeposits(context, rate * seconds + kills * BURST);
  const confirmations = deposits.map((d) => ({ transactionId: d.id, amount: d.amount }));
  const paced = confirmations.slice(0, rate * seconds);
  const bursts = confirmations.slice(rate * seconds);
  const giveUpAt = Date.now() + (seconds + context.settleSeconds) * 1000;
  const caught: number[] = [];
  const burstStorms: Promise<StormResult>[] = [];
  log(
    `ingest crash drill: ${rate} webhooks/s for ${seconds} s; SIGKILL of webhook-ingest every ${killEverySeconds} s`,
  );
  const until = Date.now() + seconds * 1000;
  const [storm, outages] = await Promise.all([
    sendStorm(gateway, target.webhookSecret, paced, { rate, giveUpAt }),
    repeatFault(killEverySeconds * 1000, until, async () => {
      const burst = bursts.splice(0, BURST);
      burstStorms.push(sendStorm(gateway, target.webhookSecret, burst, { rate: 100_000, giveUpAt }));
      const deadline = Date.now() + BURST_WAIT_MS;
      while ((await unpublishedWebhooks(context)) < CAUGHT_WANTED && Date.now() < deadline) await sleep(1);
      await system.kill('webhook-ingest', 'SIGKILL');
      // Recorded and not marked published: the requests the kill caught between the two steps.
      caught.push(await unpublishedWebhooks(context));
      await system.restart('webhook-ingest');
    }),
  ]);
  // Bursts no kill used (a drill shorter than the kill interval) are still confirmations to deliver.
  if (bursts.length > 0)
    burstStorms.push(sendStorm(gateway, target.webhookSecret, bursts, { rate, giveUpAt }));
  const all = mergeStorms([storm, ...(await Promise.all(burstStorms))]);
  const { deposits: credited, checks } = await settleAndCheck(context, accountIds, all, true);
  return {
    name: 'webhook-ingest killed between record and publish',
    injected: [
      `${outages.length} × SIGKILL of webhook-ingest during a burst of ${BURST} deliveries, restarted at once; ` +
        `events caught recorded but not marked published: ${caught.join(', ') || 'none'}`,
    ],
    operations: { ...stormOperations(all), 'deposits credited': credited.count },
    faults: outages.length,
    moneyMovedMinor: credited.creditedMinor,
    checks,
    durationMs: Date.now() - started,
  };
}

function mergeStorms(storms: StormResult[]): StormResult {
  const merged: StormResult = {
    deliveries: 0,
    attempts: 0,
    answered: 0,
    abandoned: 0,
    statuses: {},
    confirmed: new Set(),
  };
  for (const storm of storms) {
    merged.deliveries += storm.deliveries;
    merged.attempts += storm.attempts;
    merged.answered += storm.answered;
    merged.abandoned += storm.abandoned;
    for (const [status, n] of Object.entries(storm.statuses))
      merged.statuses[status] = (merged.statuses[status] ?? 0) + n;
    for (const id of storm.confirmed) merged.confirmed.add(id);
  }
  return merged;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/**
 * Every confirmation delivered one to five times, a quarter of the deposits also reported with a failed payment
 * attempt, all shuffled and sent at ten times the storm rate: an attempt never ends a deposit, so every deposit is
 * credited, once, whatever came first.
 */
export async function runDuplicateDeliveryDrill(context: DrillContext, rate: number): Promise<DrillReport> {
  const { seconds, target, gateway, log, webhookDb } = context;
  const started = Date.now();
  const deliveriesWanted = rate * 10 * seconds;
  const { accountIds, deposits } = await pendingDeposits(context, Math.ceil(deliveriesWanted / 3.5));
  const deliveries: DepositConfirmation[] = [];
  const eventIds = new Set<string>();
  const contested = new Set<string>();
  for (const deposit of deposits) {
    const success = `evt_${randomUUID()}`;
    eventIds.add(success);
    const copies = 1 + Math.floor(Math.random() * 5);
    for (let i = 0; i < copies; i += 1)
      deliveries.push({ transactionId: deposit.id, amount: deposit.amount, eventId: success });
    if (Math.random() < 0.25) {
      contested.add(deposit.id);
      const failure = `evt_${randomUUID()}`;
      eventIds.add(failure);
      const failedCopies = 1 + Math.floor(Math.random() * 3);
      for (let i = 0; i < failedCopies; i += 1) {
        deliveries.push({
          transactionId: deposit.id,
          amount: deposit.amount,
          eventId: failure,
          outcome: 'attempt_failed',
        });
      }
    }
  }
  shuffle(deliveries);
  log(
    `duplicate delivery drill: ${deliveries.length} deliveries of ${eventIds.size} events for ${deposits.length} deposits at ${rate * 10}/s`,
  );
  const storm = await sendStorm(gateway, target.webhookSecret, deliveries, {
    rate: rate * 10,
    giveUpAt: Date.now() + (seconds + context.settleSeconds) * 1000,
  });
  const { deposits: credited, checks } = await settleAndCheck(context, accountIds, storm, false);
  const { rows } = await webhookDb.query<{ count: string }>(
    'SELECT count(*) FROM webhook_events WHERE event_id = ANY($1::text[])',
    [[...eventIds]],
  );
  const recorded = Number(rows[0]?.count ?? 0);
  const outcomes = await context.ledgerDb.outcomes(deposits.map((d) => d.id));
  const notCompleted = deposits.filter((d) => outcomes.get(d.id)?.status !== 'completed').length;
  checks.push({
    name: 'every deposit confirmed as succeeded is completed, failed attempts before or after it or not',
    ok: notCompleted === 0,
    detail: `${deposits.length} deposits (${contested.size} with failed attempts too), ${notCompleted} not completed`,
    discrepancies: notCompleted,
  });
  checks.push({
    name: 'each distinct event recorded once',
    ok: recorded === eventIds.size,
    detail: `${eventIds.size} distinct events in ${deliveries.length} deliveries, ${recorded} recorded`,
    discrepancies: Math.abs(eventIds.size - recorded),
  });
  return {
    name: 'duplicated and reordered deliveries at 10× rate',
    injected: [
      `${deliveries.length - eventIds.size} duplicate deliveries, success and failed-attempt events for the same deposit in random order`,
    ],
    operations: {
      ...stormOperations(storm),
      'deposits credited': credited.count,
      'deposits with failed attempts too': contested.size,
    },
    faults: deliveries.length - eventIds.size,
    moneyMovedMinor: credited.creditedMinor,
    checks,
    durationMs: Date.now() - started,
  };
}
