import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { QUEUES } from '@payments/contracts';
import { createHttpClient } from '../harness/http-client.js';
import { BENCH_APPLICATION, openLedgerDatabase } from '../harness/ledger-db.js';
import { sleep } from '../harness/load.js';
import { postProviderEvent, providerEventBody } from '../harness/provider-webhooks.js';
import { startTarget } from '../harness/target.js';
import { openFundedAccounts, runBankClients, type BankAccount } from './bank-clients.js';
import { checkBooks, waitSettled } from './books.js';
import { completedDepositTotals, completedTransferTotals } from './drill-queries.js';
import type { DrillContext, DrillReport } from './drill-context.js';

const SCRIPT = path.resolve(import.meta.dirname, '../../../infra/ha/rabbitmq-cluster.sh');
const NODES = [1, 2, 3] as const;
const ACCOUNTS = 10;
const CLIENTS = 10;
const DEPOSITORS = 4;
const FUNDING_MINOR = 100_000;

/**
 * A 3-node RabbitMQ cluster the drills break: local processes (infra/ha/rabbitmq-cluster.sh) or the `ha` profile's
 * containers (compose-ha.ts). Nodes are numbered 1–3.
 */
export interface BrokerCluster {
  /** How a report names node `node`. */
  nameOf(node: number): string;
  /** The node (1–3) an Erlang node name (as the management API gives it) is. */
  nodeOf(erlangNode: string): number | undefined;
  /** Where node's management API is reached from this machine. */
  management(node: number): Promise<{ host: string; port: number }>;
  /**
   * Whether node serves its clients: a node paused by pause_minority closes its listener (a slow management API is
   * no sign: a cut-off node answers late long before it notices it is in the minority).
   */
  serves(node: number): Promise<boolean>;
  /** The management API's credentials. */
  credentials: { username: string; password: string };
  kill(node: number): Promise<void>;
  /** Cuts node off from the other two until `heal`; `partitionHow` says how, for the report. */
  partition(node: number): Promise<void>;
  partitionHow: string;
  heal(): Promise<void>;
  /** Stops it for good (local) or brings back what a drill took away, all three running again (compose). */
  clean(): Promise<void>;
}

const run = async (...args: string[]) =>
  (await promisify(execFile)('bash', [SCRIPT, ...args], { timeout: 180_000 })).stdout.trim();

/** Starts the cluster (or finds it running) with the script; `clean` stops it and deletes its data. */
export async function startBrokerCluster(
  log: (message: string) => void,
): Promise<BrokerCluster & { amqpUrl: string; managementUrl: string }> {
  log('starting a 3-node RabbitMQ cluster (infra/ha/rabbitmq-cluster.sh start)');
  await run('start');
  const env = Object.fromEntries(
    (await run('env')).split('\n').map((line) => line.split('=', 2) as [string, string]),
  );
  return {
    amqpUrl: env.AMQP_URL as string,
    managementUrl: 'http://127.0.0.1:15683',
    nameOf: (node) => `payments-ha-${node}`,
    nodeOf: (erlangNode) => Number(/^payments-ha-(\d)@/.exec(erlangNode)?.[1]) || undefined,
    management: async (node) => ({ host: '127.0.0.1', port: 15680 + node }),
    serves: (node) => listens('127.0.0.1', 5680 + node),
    credentials: { username: 'guest', password: 'guest' },
    kill: async (node) => void (await run('kill', String(node))),
    partition: async (node) => void (await run('partition', String(node))),
    partitionHow: 'nftables drops its Erlang distribution traffic on loopback',
    heal: async () => void (await run('heal')),
    clean: async () => void (await run('clean')),
  };
}

/** A management API call answered by the first node that answers. */
export async function management<T>(cluster: BrokerCluster, apiPath: string): Promise<T> {
  const { username, password } = cluster.credentials;
  const failures: string[] = [];
  for (const node of NODES) {
    try {
      const { host, port } = await cluster.management(node);
      const response = await fetch(`http://${host}:${port}/api/${apiPath}`, {
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
        signal: AbortSignal.timeout(3000),
      });
      if (response.ok) return (await response.json()) as T;
      failures.push(`node ${node}: ${response.status}`);
    } catch (error) {
      failures.push(`node ${node}: ${(error as Error).message}`);
    }
  }
  throw new Error(`no management API answers: ${failures.join('; ')}`);
}

/** The node (1–3) the ledger's consumers read its queue from, by the management API's consumer list. */
async function ledgerConsumerNodes(cluster: BrokerCluster, namespace: string): Promise<number[]> {
  const consumers = await management<{ queue: { name: string }; channel_details: { node: string } }[]>(
    cluster,
    'consumers',
  );
  const queue = namespace + QUEUES.ledger.name;
  return [
    ...new Set(
      consumers
        .filter((consumer) => consumer.queue.name === queue)
        .map((consumer) => cluster.nodeOf(consumer.channel_details.node))
        .filter((node): node is number => node !== undefined),
    ),
  ];
}

/**
 * The ledger's consumer nodes once they satisfy `wanted`, or as last seen after 30 s: the management API lists
 * consumers from statistics it gathers every 5 s.
 */
async function settledConsumerNodes(
  cluster: BrokerCluster,
  namespace: string,
  wanted: (nodes: number[]) => boolean,
): Promise<number[]> {
  let nodes: number[] = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(500)) {
    nodes = await ledgerConsumerNodes(cluster, namespace).catch(() => nodes);
    if (wanted(nodes)) break;
  }
  return nodes;
}

/** Each of the namespace's quorum queues with its members and leader. */
async function quorumQueues(cluster: BrokerCluster, namespace: string) {
  const queues = await management<
    { name: string; type: string; members?: string[]; leader?: string; online?: string[] }[]
  >(cluster, 'queues/%2F?columns=name,type,members,leader,online');
  return queues.filter((queue) => queue.name.startsWith(namespace) && queue.type === 'quorum');
}

/** When each client-visible call through the broker was answered, and whether it went through. */
interface Timeline {
  attempts: { at: number; ok: boolean }[];
}

/**
 * The clients' view of the outage: the first failed call after the fault, the last one, and the first success after
 * that (recovery = that success − the first failure).
 */
function outageOf(timeline: Timeline, faultAt: number) {
  const after = timeline.attempts.filter((attempt) => attempt.at >= faultAt).sort((a, b) => a.at - b.at);
  const failures = after.filter((attempt) => !attempt.ok);
  const first = failures[0];
  const last = failures[failures.length - 1];
  if (!first || !last) return { failures: 0, recoveryMs: 0, text: 'no call failed' };
  const recovered = after.find((attempt) => attempt.ok && attempt.at > last.at);
  const recoveryMs = recovered ? recovered.at - first.at : NaN;
  return {
    failures: failures.length,
    recoveryMs,
    text:
      `${failures.length} failed calls from ${((first.at - faultAt) / 1000).toFixed(1)} s after the fault; ` +
      `first error to first success after the last: ${recovered ? `${(recoveryMs / 1000).toFixed(1)} s` : 'never'}`,
  };
}

/**
 * Depositors asking for deposits through the gateway (202), each confirmed by a signed provider webhook that
 * webhook-ingest answers 200 only once the broker confirmed its event: the broker-dependent path the clients see.
 * Every attempt is timed; a delivery is retried until 200 or `giveUpAt`.
 */
async function runDepositors(
  context: DrillContext,
  accounts: readonly BankAccount[],
  until: number,
  giveUpAt: number,
  timeline: Timeline,
) {
  const stats = { accepted: 0, confirmed: new Set<string>(), abandoned: 0, failedRequests: 0 };
  const { gateway, target } = context;
  const deposit = async () => {
    const account = accounts[Math.floor(Math.random() * accounts.length)] as BankAccount;
    const amountMinor = 100 + Math.floor(Math.random() * 9900);
    const key = randomUUID();
    let transactionId: string | undefined;
    for (let attempt = 0; !transactionId; attempt += 1) {
      // Raw: a request retried with its Idempotency-Key on the drill's own schedule under the fault.
      const answer = await gateway
        .send({
          method: 'POST',
          path: `/account/${account.accountId}/deposit`,
          headers: {
            authorization: `Bearer ${account.token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify({ amount: amountMinor / 100, currency: 'USD' }),
        })
        .catch(() => null);
      if (answer?.status === 202) transactionId = (JSON.parse(answer.body) as { id: string }).id;
      else if (Date.now() > giveUpAt) return;
      else {
        stats.failedRequests += 1;
        await sleep(Math.min(100 * 2 ** attempt, 1000));
      }
    }
    stats.accepted += 1;
    const body = providerEventBody({ transactionId, amount: amountMinor });
    for (let attempt = 0; ; attempt += 1) {
      const answer = await postProviderEvent(gateway, body, target.webhookSecret).catch(() => null);
      timeline.attempts.push({ at: Date.now(), ok: answer?.status === 200 });
      if (answer?.status === 200) {
        stats.confirmed.add(transactionId);
        return;
      }
      if (Date.now() > giveUpAt) {
        stats.abandoned += 1;
        return;
      }
      await sleep(Math.min(50 * 2 ** attempt, 500));
    }
  };
  await Promise.all(
    Array.from({ length: DEPOSITORS }, async () => {
      while (Date.now() < until) await deposit();
    }),
  );
  return stats;
}

/** The longest time no deposit on the accounts was credited, within [from, to]. */
async function longestCreditGapMs(
  context: DrillContext,
  accountIds: readonly string[],
  from: number,
  to: number,
) {
  const { rows } = await context.ledgerDb.pool.query<{ at: Date }>(
    `SELECT completed_at AS at FROM transactions
     WHERE type = 'deposit' AND status = 'completed' AND account_id = ANY($1::uuid[])
       AND completed_at BETWEEN $2 AND $3 ORDER BY completed_at`,
    [accountIds, new Date(from), new Date(to)],
  );
  let longest = 0;
  let previous = from;
  for (const { at } of rows) {
    longest = Math.max(longest, at.getTime() - previous);
    previous = at.getTime();
  }
  return Math.max(longest, to - previous);
}

export interface HaSystem {
  context: DrillContext;
  cluster: BrokerCluster;
  stop(): Promise<void>;
}

/**
 * A system of its own on the cluster: every service a process whose AMQP_URL lists the three nodes (the test kit
 * reads them from TEST_AMQP_URL, provisioning users through node 3's management API), no sandbox: the drill plays
 * the provider.
 */
export async function startHaSystem(
  cluster: BrokerCluster,
  options: Pick<DrillContext, 'seconds' | 'settleSeconds' | 'log'>,
): Promise<HaSystem> {
  const target = await startTarget({
    sandbox: false,
    serviceEnv: { identity: { TOKEN_TTL_SECONDS: '3600' } },
  });
  if (!target.system) throw new Error('the HA drills need a system they started themselves');
  const pool = (url: string) => {
    const created = new pg.Pool({ connectionString: url, max: 2, application_name: BENCH_APPLICATION });
    created.on('error', () => undefined);
    return created;
  };
  const context: DrillContext = {
    ...options,
    target,
    system: target.system,
    gateway: createHttpClient(target.gatewayUrl, 64),
    ledgerDb: openLedgerDatabase(target.ledgerDatabaseUrl),
    webhookDb: pool(target.webhookDatabaseUrl),
    adminDb: pool(target.postgresUrl),
    brokerProxy: null,
  };
  return {
    context,
    cluster,
    async stop() {
      context.gateway.close();
      await context.ledgerDb.close();
      await context.webhookDb.end();
      await context.adminDb.end();
      await target.stop();
    },
  };
}

/** What a drill does to the cluster: inject at the fault time, say what it did, and what to check after. */
export interface BrokerFault {
  name: string;
  inject(node: number): Promise<string>;
  checks?(): Promise<DrillReport['checks']>;
}

/** Whether something accepts TCP connections on host:port within a second. */
export function listens(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves with the time `node` answers `wanted`, polling every 250 ms, or null after `timeoutMs`. */
async function nodeBecomes(cluster: BrokerCluster, node: number, wanted: boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await cluster.serves(node).catch(() => false)) === wanted) return Date.now();
    await sleep(250);
  }
  return null;
}

/** Node `node` cut off from the other two for `holdSeconds`, then healed; it must pause, then rejoin. */
export const partitionNode = (cluster: BrokerCluster, holdSeconds: number): BrokerFault => {
  let running: string[] = [];
  return {
    name: 'partition of the broker node the ledger consumes from, healed',
    async inject(node) {
      await cluster.partition(node);
      const cutAt = Date.now();
      const pausedAt = nodeBecomes(cluster, node, false, holdSeconds * 1000);
      await sleep(holdSeconds * 1000);
      await cluster.heal();
      const healedAt = Date.now();
      const backAt = await nodeBecomes(cluster, node, true, 60_000);
      const paused = await pausedAt;
      const since = (at: number | null, from: number) =>
        at === null ? 'never' : `${((at - from) / 1000).toFixed(1)} s`;
      const nodes = await management<{ name: string; running: boolean }[]>(cluster, 'nodes');
      running = nodes.filter((n) => n.running).map((n) => n.name);
      return (
        `${cluster.nameOf(node)} (the ledger's consumers were on it) cut off from the other two for ${holdSeconds} s ` +
        `(${cluster.partitionHow}); it was seen paused (pause_minority) ${since(paused, cutAt)} after the cut, ` +
        `and serving again ${since(backAt, healedAt)} after the heal`
      );
    },
    async checks() {
      return [
        {
          name: 'the partitioned node rejoined: all three nodes running after the heal',
          ok: running.length === NODES.length,
          detail: `running: ${running.join(', ') || 'none'}`,
          discrepancies: running.length === NODES.length ? 0 : 1,
        },
      ];
    },
  };
};

export const killNode = (cluster: BrokerCluster): BrokerFault => ({
  name: 'SIGKILL of the broker node the ledger consumes from, left down',
  async inject(node) {
    await cluster.kill(node);
    return `SIGKILL of ${cluster.nameOf(node)} (the ledger's consumers were on it), left down to the end`;
  },
});

/**
 * Money moving (transfers, balance reads, deposits requested and confirmed by the provider's webhooks) while the
 * fault hits the node the ledger consumes from, a quarter into the drill; then the books, and the clients' view.
 */
export async function runHaBrokerDrill(ha: HaSystem, fault: BrokerFault): Promise<DrillReport> {
  const { context, cluster } = ha;
  const { seconds, settleSeconds, log, target } = context;
  const started = Date.now();
  const namespace = target.amqpNamespace;
  const accounts = await openFundedAccounts(context, ACCOUNTS, FUNDING_MINOR);
  const ids = accounts.map((account) => account.accountId);
  const queues = await quorumQueues(cluster, namespace);
  const underReplicated = queues.filter((queue) => (queue.members ?? []).length !== NODES.length);
  const consumerNodes = await settledConsumerNodes(cluster, namespace, (nodes) => nodes.length > 0);
  const node = consumerNodes[0];
  if (node === undefined) throw new Error("within 30 s no node of the cluster lists the ledger's consumers");

  const until = Date.now() + seconds * 1000;
  const giveUpAt = until + settleSeconds * 1000;
  const faultAt = Date.now() + (seconds * 1000) / 4;
  const timeline: Timeline = { attempts: [] };
  log(
    `${fault.name}: ${CLIENTS} clients and ${DEPOSITORS} depositors for ${seconds} s; the ledger consumes from node ${node}`,
  );
  let injected = '';
  const [clients, depositors] = await Promise.all([
    runBankClients(context, accounts, CLIENTS, until),
    runDepositors(context, accounts, until, giveUpAt, timeline),
    (async () => {
      await sleep(faultAt - Date.now());
      injected = await fault.inject(node);
      log(injected);
    })(),
  ]);
  const stillPending = await waitSettled(context, ids, settleSeconds * 1000);
  log(`settled (${stillPending} pending); checking the books`);
  const deposits = await completedDepositTotals(context, ids);
  const transfers = await completedTransferTotals(context, ids);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor: deposits.creditedMinor - transfers.feesMinor,
    confirmed: depositors.confirmed,
    confirmationsAllSucceed: true,
  });
  const movedTo = await settledConsumerNodes(
    cluster,
    namespace,
    (nodes) => nodes.length > 0 && !nodes.includes(node),
  );
  const { rows: unpublished } = await context.webhookDb.query<{ count: string }>(
    `SELECT count(*) FROM webhook_events WHERE published_at IS NULL AND outcome <> 'ignored'`,
  );
  const leftUnpublished = Number(unpublished[0]?.count ?? 0);
  const outage = outageOf(timeline, faultAt);
  const creditGap = await longestCreditGapMs(context, ids, faultAt - 1000, until);
  checks.push(
    {
      name: 'every quorum queue replicated on all three nodes before the fault',
      ok: queues.length > 0 && underReplicated.length === 0,
      detail: `${queues.length} quorum queues, ${underReplicated.length} with fewer than 3 members${underReplicated.map((q) => `; ${q.name}: ${(q.members ?? []).length}`).join('')}`,
      discrepancies: queues.length > 0 ? underReplicated.length : 1,
    },
    {
      name: 'every requested deposit accepted (202) and its confirmation answered 200',
      ok: depositors.abandoned === 0,
      detail: `${depositors.accepted} accepted, ${depositors.confirmed.size} confirmed, ${depositors.abandoned} abandoned`,
      discrepancies: depositors.abandoned,
    },
    {
      name: 'every transfer a client sent has a known outcome',
      ok: clients.unresolved === 0,
      detail: `${clients.unresolved} given up on; ${clients.retries} retried with their Idempotency-Key`,
      discrepancies: clients.unresolved,
    },
    {
      name: 'no webhook event left recorded but unpublished',
      ok: leftUnpublished === 0,
      detail: `${leftUnpublished} in webhook-ingest's table`,
      discrepancies: leftUnpublished,
    },
    {
      name: "the ledger's consumers moved to a surviving node",
      ok: movedTo.length > 0 && !movedTo.includes(node),
      detail: `on node ${node} before, on ${movedTo.length ? `node ${movedTo.join(', ')}` : 'none'} after`,
      discrepancies: movedTo.length > 0 && !movedTo.includes(node) ? 0 : 1,
    },
  );
  if (fault.checks) checks.push(...(await fault.checks()));
  const recovery = Number.isNaN(outage.recoveryMs) ? 'never' : `${(outage.recoveryMs / 1000).toFixed(1)} s`;
  log(
    `recovery (first error to first success): ${recovery}; longest time without a credit: ${(creditGap / 1000).toFixed(1)} s`,
  );
  return {
    name: `HA broker: ${fault.name}`,
    injected: [
      injected,
      `clients saw: webhooks ${outage.text}; ${clients.failedAttempts} transfer or balance calls failed (5xx or connection), ${depositors.failedRequests} deposit requests retried`,
      `recovery (first error to first success): ${recovery}; longest time without a deposit credited: ${(creditGap / 1000).toFixed(1)} s`,
    ],
    operations: {
      'deposits accepted (202)': depositors.accepted,
      'deposits credited': deposits.count,
      'webhook attempts': timeline.attempts.length,
      'transfers accepted (202)': clients.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422)': clients.transfersRefused,
      'balance reads': clients.balanceReads,
      'failed attempts (5xx or connection)': clients.failedAttempts + outage.failures,
    },
    faults: 1,
    moneyMovedMinor: deposits.creditedMinor + transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}
