import type { ServiceName } from '@payments/infra';
import type { HttpAnswer, HttpClient } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import { startTarget } from '../harness/target.js';
import { openFundedAccounts, runBankClients } from './bank-clients.js';
import { checkBooks, waitSettled } from './books.js';
import { completedTransferTotals } from './drill-queries.js';
import { closeDrillContext, openDrillContext, type DrillContext, type DrillReport } from './drill-context.js';
import { startPatroniCluster, type PatroniCluster, type PatroniMember } from './patroni-cluster.js';

export const HA_POSTGRES_DRILLS = ['ha-postgres-failover', 'ha-postgres-standby'] as const;
export type HaPostgresDrill = (typeof HA_POSTGRES_DRILLS)[number];

const ACCOUNTS = 10;
const CLIENTS = 20;
const FUNDING_MINOR = 100_000;
/** How long Patroni may take to heal the cluster once the lost node is back: a pg_rewind and a catch-up. */
const REJOIN_TIMEOUT_MS = 90_000;

type Check = DrillReport['checks'][number];

/** One answer a client got during the drill: when, its status (null when the connection failed), how long it took. */
interface Observed {
  at: number;
  status: number | null;
  ms: number;
}

/**
 * The gateway as the drill's clients reach it, recording every answer's time and status and the id of every
 * transfer answered 202, so the drill can say what clients saw and find each accepted transfer afterwards.
 */
function observeGateway(gateway: HttpClient) {
  const answers: Observed[] = [];
  const accepted = new Set<string>();
  // A retry answered as a replay: the attempt that failed had committed (its answer, not its work, was lost).
  const replays = { count: 0 };
  const client: HttpClient = {
    ...gateway,
    async send(call) {
      const sent = Date.now();
      let answer: HttpAnswer;
      try {
        answer = await gateway.send(call);
      } catch (error) {
        answers.push({ at: Date.now(), status: null, ms: Date.now() - sent });
        throw error;
      }
      answers.push({ at: Date.now(), status: answer.status, ms: Date.now() - sent });
      if (answer.status === 202 && call.path.endsWith('/transfer')) {
        accepted.add((JSON.parse(answer.body) as { id: string }).id);
        if (answer.headers['idempotent-replayed'] === 'true') replays.count += 1;
      }
      return answer;
    },
  };
  return { client, answers, accepted, replays };
}

const failed = (answer: Observed) => answer.status === null || answer.status >= 500;

/** What the clients saw from the fault on: the first error, the first success after it, the errors by status. */
function clientsSaw(answers: readonly Observed[], faultAt: number) {
  const after = answers.filter((answer) => answer.at >= faultAt).sort((a, b) => a.at - b.at);
  const firstError = after.find(failed);
  const firstSuccess = firstError && after.find((answer) => answer.at > firstError.at && !failed(answer));
  const lastError = after.findLast(failed);
  const byStatus: Record<string, number> = {};
  for (const answer of after.filter(failed)) {
    const key = answer.status === null ? 'connection failed' : `answered ${answer.status}`;
    byStatus[key] = (byStatus[key] ?? 0) + 1;
  }
  const seconds = (at: number | undefined) => (at === undefined ? null : (at - faultAt) / 1000);
  // A commit waiting for a standby that is gone shows as a slow answer, not an error.
  const slowest = after.reduce((most, answer) => Math.max(most, answer.ms), 0);
  return {
    slowestS: slowest / 1000,
    firstErrorS: seconds(firstError?.at),
    firstSuccessS: seconds(firstSuccess?.at),
    lastErrorS: seconds(lastError?.at),
    recoveryS: firstError && firstSuccess ? (firstSuccess.at - firstError.at) / 1000 : null,
    byStatus,
  };
}

const leaderOf = (members: PatroniMember[]) => members.find((member) => member.role === 'leader')?.name;
const syncStandbyOf = (members: PatroniMember[]) =>
  members.find((member) => member.role === 'sync_standby' && ['running', 'streaming'].includes(member.state))
    ?.name;

/** Polls Patroni until `done` holds; resolves with the time it did, or null at the deadline. */
async function waitForCluster(
  cluster: PatroniCluster,
  timeoutMs: number,
  done: (members: PatroniMember[]) => boolean,
): Promise<number | null> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(250)) {
    if (done(await cluster.members())) return Date.now();
  }
  return null;
}

export interface HaDrillContext extends DrillContext {
  cluster: PatroniCluster;
}

/**
 * Transfers and reads through the gateway while a node of the PostgreSQL cluster is lost (SIGKILL of its Patroni,
 * postmaster and backends): the primary, so that Patroni promotes the synchronous standby and HAProxy follows, or
 * the standby, so that the primary goes on alone. The lost node comes back three quarters into the load and must
 * rejoin as the synchronous standby.
 */
export async function runHaPostgresDrill(
  context: HaDrillContext,
  drill: HaPostgresDrill,
): Promise<DrillReport> {
  const { seconds, settleSeconds, log, cluster } = context;
  const started = Date.now();
  const observed = observeGateway(context.gateway);
  const accounts = await openFundedAccounts(context, ACCOUNTS, FUNDING_MINOR);
  const ids = accounts.map((account) => account.accountId);
  const before = await cluster.members();
  const leader = leaderOf(before);
  const standby = syncStandbyOf(before);
  if (!leader || !standby)
    throw new Error(`the cluster has no leader and sync standby to drill: ${JSON.stringify(before)}`);
  const victim = drill === 'ha-postgres-failover' ? leader : standby;
  const survivor = victim === leader ? standby : leader;
  const until = Date.now() + seconds * 1000;
  const lostAfterMs = Math.max(3000, (seconds * 1000) / 4);
  log(
    `${drill}: ${CLIENTS} clients for ${seconds} s; node ${victim} (${victim === leader ? 'the primary' : 'the sync standby'}) ` +
      `lost after ${lostAfterMs / 1000} s, back at ${(seconds * 0.75).toFixed(1)} s or 3 s after Patroni settled`,
  );

  const fault = async () => {
    await sleep(lostAfterMs);
    const faultAt = Date.now();
    await cluster.killNode(victim);
    // Failover: the survivor is the leader. Standby lost: Patroni drops it from synchronous_standby_names.
    const settledAt = await waitForCluster(cluster, 60_000, (members) =>
      drill === 'ha-postgres-failover'
        ? leaderOf(members) === survivor && members.find((m) => m.name === survivor)?.state === 'running'
        : leaderOf(members) === survivor && !syncStandbyOf(members),
    );
    // Back three quarters into the load, and not before the cluster has run a while without it.
    const backAfter = Math.max(until - (seconds * 1000) / 4, (settledAt ?? Date.now()) + 3000);
    await sleep(Math.max(0, backAfter - Date.now()));
    const backAt = Date.now();
    await cluster.startNode(victim);
    const rejoinedAt = await waitForCluster(
      cluster,
      REJOIN_TIMEOUT_MS,
      (members) => leaderOf(members) === survivor && syncStandbyOf(members) === victim,
    );
    return { faultAt, settledAt, backAt, rejoinedAt };
  };
  const [stats, timeline] = await Promise.all([
    runBankClients({ gateway: observed.client }, accounts, CLIENTS, until),
    fault(),
  ]);
  const stillPending = await waitSettled(context, ids, settleSeconds * 1000);
  log(`${drill}: settled (${stillPending} pending); checking the books`);

  const transfers = await completedTransferTotals(context, ids);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor: BigInt(ACCOUNTS * FUNDING_MINOR) - transfers.feesMinor,
  });
  checks.push(
    {
      name: 'every transfer a client sent has a known outcome',
      ok: stats.unresolved === 0,
      detail: `${stats.unresolved} given up on; ${stats.retries} retried with their Idempotency-Key`,
      discrepancies: stats.unresolved,
    },
    await acceptedTransfersEnded(context, observed.accepted),
  );
  const after = await cluster.members();
  const seen = clientsSaw(observed.answers, timeline.faultAt);
  const at = (time: number | null) =>
    time === null ? 'never' : `+${((time - timeline.faultAt) / 1000).toFixed(1)} s`;
  const healed = timeline.rejoinedAt !== null;
  checks.push({
    name: `${victim} back and streaming as the synchronous standby of ${survivor}`,
    ok: healed,
    detail: healed
      ? `rejoined ${((Number(timeline.rejoinedAt) - timeline.backAt) / 1000).toFixed(1)} s after its Patroni started; ${after.map((m) => `${m.name} ${m.role} ${m.state} timeline ${m.timeline}`).join(', ')}`
      : `not within ${REJOIN_TIMEOUT_MS / 1000} s: ${JSON.stringify(after)}`,
    discrepancies: healed ? 0 : 1,
  });
  const recovery =
    seen.recoveryS === null
      ? seen.firstErrorS === null
        ? 'clients saw no error'
        : `first error at +${seen.firstErrorS.toFixed(1)} s and no success after it`
      : `first error at +${seen.firstErrorS?.toFixed(1)} s, first success after it at +${seen.firstSuccessS?.toFixed(1)} s: ` +
        `recovery ${seen.recoveryS.toFixed(1)} s (last error at +${seen.lastErrorS?.toFixed(1)} s)`;
  return {
    name:
      drill === 'ha-postgres-failover'
        ? 'PostgreSQL primary lost: Patroni promotes the sync standby'
        : 'PostgreSQL sync standby lost: the primary goes on alone',
    injected: [
      `SIGKILL of node ${victim}'s Patroni, postmaster and backends at +${((timeline.faultAt - started) / 1000).toFixed(1)} s of the drill`,
      drill === 'ha-postgres-failover'
        ? `Patroni: ${survivor} leader at ${at(timeline.settledAt)} (HAProxy follows GET /primary)`
        : `Patroni: ${victim} out of synchronous_standby_names at ${at(timeline.settledAt)}; ${survivor} commits alone`,
      `clients: ${recovery}; slowest answer ${seen.slowestS.toFixed(1)} s`,
      `services logged (of the last 200 lines each keeps): ${servicesLogged(context, timeline.faultAt)}`,
      `${victim} started again at ${at(timeline.backAt)}, sync standby again at ${at(timeline.rejoinedAt)}`,
    ],
    operations: {
      'transfers accepted (202)': stats.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422, not enough money)': stats.transfersRefused,
      'balance reads': stats.balanceReads,
      'failed attempts (5xx or connection)': stats.failedAttempts,
      ...seen.byStatus,
      'retries answered as replays (the failed attempt had committed)': observed.replays.count,
      ...Object.fromEntries(Object.entries(stats.unexpected).map(([what, n]) => [`unexpected ${what}`, n])),
    },
    faults: 1,
    moneyMovedMinor: transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}

/**
 * The errors the services logged from `since` on, by service and message, most first: a sample, since a system
 * keeps only the last 200 lines of each service.
 */
function servicesLogged(context: DrillContext, since: number): string {
  const counts = new Map<string, number>();
  let read = 0;
  for (const service of Object.keys(context.target.ports)) {
    for (const line of context.system.logs(service as ServiceName).split('\n')) {
      if (!line.startsWith('{')) continue;
      read += 1;
      try {
        const entry = JSON.parse(line) as {
          level?: number;
          time?: number;
          msg?: string;
          err?: { message?: string };
        };
        if ((entry.level ?? 0) < 50 || (entry.time ?? 0) < since) continue;
        const what = `${service}: ${entry.msg ?? ''}${entry.err?.message ? ` (${entry.err.message})` : ''}`;
        counts.set(what, (counts.get(what) ?? 0) + 1);
      } catch {
        continue;
      }
    }
  }
  // A compose system's logs are the containers' (docker logs), not read here.
  if (read === 0) return context.system.logs();
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4);
  return top.length ? top.map(([what, n]) => `${what} ×${n}`).join('; ') : 'no errors';
}

/** Every transfer answered 202 is in the ledger after the fault, and ended: completed, failed or canceled. */
async function acceptedTransfersEnded(context: DrillContext, accepted: ReadonlySet<string>): Promise<Check> {
  const { rows } = await context.ledgerDb.pool.query<{ status: string; count: string }>(
    `SELECT status, count(*) FROM transactions WHERE id = ANY($1::uuid[]) GROUP BY status`,
    [[...accepted]],
  );
  const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  const found = rows.reduce((sum, row) => sum + Number(row.count), 0);
  const missing = accepted.size - found;
  const pending = byStatus.pending ?? 0;
  const statuses = Object.entries(byStatus)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  return {
    name: 'every transfer answered 202 is in the ledger and ended',
    ok: missing === 0 && pending === 0,
    detail: `${accepted.size} accepted: ${statuses || 'none found'}; ${missing} missing`,
    discrepancies: missing + pending,
  };
}

/**
 * The PostgreSQL failover drills: a cluster under Patroni (infra/ha/postgres-patroni.sh) with HAProxy in front,
 * and a system whose every service reaches its database through HAProxy. They run alone: the test kit finds its
 * PostgreSQL once per process, and here that is the cluster, not the server on 5432.
 */
export async function runHaPostgresDrills(
  drills: readonly HaPostgresDrill[],
  settings: { seconds: number; settleSeconds: number; log(message: string): void },
  report: (report: DrillReport) => void,
): Promise<void> {
  const { log } = settings;
  const cluster = await startPatroniCluster(log);
  try {
    process.env.TEST_DATABASE_URL = cluster.url;
    log(`starting the system; every service's DATABASE_URL goes through HAProxy (${cluster.url})`);
    const target = await startTarget({
      sandbox: false,
      serviceEnv: { identity: { TOKEN_TTL_SECONDS: '3600' } },
    });
    if (!target.system) throw new Error('the PostgreSQL failover drills need a system they started');
    const context: HaDrillContext = {
      ...openDrillContext({
        target,
        system: target.system,
        brokerProxy: null,
        postgresUrl: cluster.url,
        seconds: settings.seconds,
        settleSeconds: settings.settleSeconds,
        log,
      }),
      cluster,
    };
    try {
      for (const drill of drills) report(await runHaPostgresDrill(context, drill));
    } catch (error) {
      console.error(target.system.logs());
      throw error;
    } finally {
      await closeDrillContext(context);
      await target.stop();
    }
  } finally {
    await cluster.down();
  }
}
