import { findInfrastructure } from '@payments/testkit';
import { attachTarget, startTarget, type Target } from './harness/target.js';
import { composeFaults } from './drills/compose-faults.js';
import { runAdversarialDrill, startAdversarialSystem } from './drills/adversarial-drill.js';
import { runBankDrill, startBankDrillSystem } from './drills/bank-drill.js';
import { runProviderDrill, startProviderDrillSystem } from './drills/provider-drill.js';
import { formatUsd } from './drills/books.js';
import { runDatabaseCutDrill } from './drills/database-cut-drill.js';
import {
  HA_POSTGRES_DRILLS,
  runHaPostgresDrill,
  runHaPostgresDrills,
  type HaPostgresDrill,
} from './drills/ha-postgres-drills.js';
import { composeBrokerCluster, composePatroniCluster } from './drills/compose-ha.js';
import {
  killNode,
  partitionNode,
  runHaBrokerDrill,
  startBrokerCluster,
  startHaSystem,
  type BrokerCluster,
  type BrokerFault,
} from './drills/ha-broker-drill.js';
import {
  closeDrillContext,
  discrepanciesOf,
  openDrillContext,
  type DrillContext,
  type DrillReport,
} from './drills/drill-context.js';
import { startTcpProxy } from '@payments/testkit';
import {
  runBrokerOutageDrill,
  runDuplicateDeliveryDrill,
  runIngestCrashDrill,
} from './drills/webhook-drills.js';

const DRILLS = ['bank', 'broker', 'database', 'ingest', 'duplicates', 'adversarial', 'provider'] as const;
/**
 * Drills run only when DRILL_ONLY names them, and alone (one family at a time): the `ha-postgres-*` ones start
 * PostgreSQL under Patroni (infra/ha/postgres-patroni.sh, Debian's patroni, etcd-server and haproxy) and a system on
 * it; the `ha-broker-*` ones a 3-node RabbitMQ cluster of local processes (infra/ha/rabbitmq-cluster.sh).
 */
const HA_BROKER_DRILLS = ['ha-broker-kill', 'ha-broker-partition'] as const;
type Drill = (typeof DRILLS)[number] | HaPostgresDrill | (typeof HA_BROKER_DRILLS)[number];
/**
 * DRILL_COMPOSE_PROJECT: drill a system docker compose runs (infra/containers/proof.sh) instead of starting one.
 * Its addresses come from BENCH_GATEWAY_URL, BENCH_POSTGRES_URL (a superuser, for the ledger's and webhook-ingest's
 * databases), BENCH_WEBHOOK_SECRET and BENCH_SERVICE_TOKEN; the faults are `docker kill` / `docker start` of one
 * replica at a time. The broker outage needs a TCP proxy the drill puts between webhook-ingest and RabbitMQ, and
 * the bank, adversarial and provider drills a system configured their own way (the bank and provider drills a
 * sandbox the ledger asks as its provider): those run only on a system the drill starts. The `ha-*` drills run
 * against the compose `ha` profile (infra/compose/ha.yml; proof.sh --ha), all four in one run, on its own cluster:
 * BENCH_AMQP_URL then names the broker's administrator.
 */
const composeProject = process.env.DRILL_COMPOSE_PROJECT;
const COMPOSE_DRILLS: readonly Drill[] = ['database', 'ingest', 'duplicates'];
/**
 * The drills that share one system, the drill playing the provider; the bank, adversarial and provider drills
 * start their own.
 */
const SHARED_SYSTEM_DRILLS: readonly Drill[] = ['broker', 'database', 'ingest', 'duplicates'];

const short = process.argv.includes('--short');
const env = process.env;
const integer = (name: string, fallback: number) => {
  const value = env[name] ? Number(env[name]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

const seconds = integer('DRILL_SECONDS', short ? 10 : 60);
const settings = {
  seconds,
  // The work left when the faults stop grows with their length (the provider drill's thousands of reconciliation
  // cases); a drill that settled sooner ends sooner.
  settleSeconds: integer('DRILL_SETTLE_SECONDS', short ? 30 : 2 * seconds),
  killEverySeconds: integer('DRILL_KILL_EVERY_SECONDS', 10),
  cutEverySeconds: integer('DRILL_CUT_EVERY_SECONDS', 2),
  webhookRate: integer('DRILL_WEBHOOK_RATE', 30),
  outageSeconds: Math.min(integer('DRILL_OUTAGE_SECONDS', 10), Math.max(1, Math.floor(seconds / 2))),
  only: new Set<Drill>(
    env.DRILL_ONLY ? (env.DRILL_ONLY.split(',') as Drill[]) : composeProject ? COMPOSE_DRILLS : DRILLS,
  ),
};
const haPostgresDrills = HA_POSTGRES_DRILLS.filter((drill) => settings.only.has(drill));
const haBrokerDrills = HA_BROKER_DRILLS.filter((drill) => settings.only.has(drill));
for (const [family, named, where] of [
  [HA_POSTGRES_DRILLS, haPostgresDrills, 'on a system the drill starts on PostgreSQL under Patroni'],
  [
    HA_BROKER_DRILLS,
    haBrokerDrills,
    "on a RabbitMQ cluster of their own (the other drills use the machine's single broker)",
  ],
] as const)
  if (named.length > 0 && named.length < settings.only.size && !composeProject)
    throw new Error(`${family.join(', ')} run alone, ${where}: name no other drill in DRILL_ONLY`);
const known: readonly string[] = [...DRILLS, ...HA_POSTGRES_DRILLS, ...HA_BROKER_DRILLS];
const unknown = [...settings.only].filter((drill) => !known.includes(drill));
if (unknown.length > 0)
  throw new Error(`DRILL_ONLY names unknown drills: ${unknown.join(', ')} (known: ${known.join(', ')})`);
if (composeProject) {
  const ha: readonly string[] = [...HA_POSTGRES_DRILLS, ...HA_BROKER_DRILLS];
  const named = [...settings.only];
  if (named.some((drill) => ha.includes(drill)) && !named.every((drill) => ha.includes(drill)))
    throw new Error(`against a compose system the ha-* drills run alone: name no other drill in DRILL_ONLY`);
  const unsupported = named.filter((drill) => !COMPOSE_DRILLS.includes(drill) && !ha.includes(drill));
  if (unsupported.length > 0)
    throw new Error(
      `against a compose system only ${COMPOSE_DRILLS.join(', ')} run (not ${unsupported.join(', ')}: ` +
        'they need a system the drill starts, configured their own way)',
    );
}

const log = (message: string) => console.error(`[drill] ${message}`);

function printReport(report: DrillReport): void {
  const discrepancies = discrepanciesOf(report);
  console.log(
    `\n== ${report.name}: ${discrepancies === 0 ? 'PASS' : 'FAIL'} (${(report.durationMs / 1000).toFixed(1)} s)`,
  );
  for (const line of report.injected) console.log(`   injected: ${line}`);
  const operations = Object.entries(report.operations).map(
    ([what, n]) => `${what} ${n.toLocaleString('en-US')}`,
  );
  console.log(`   operations: ${operations.join(', ')}`);
  console.log(`   money moved: ${formatUsd(report.moneyMovedMinor)} USD`);
  for (const check of report.checks) {
    console.log(`   ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
  }
  console.log(`   faults: ${report.faults.toLocaleString('en-US')}, discrepancies: ${discrepancies}`);
}

/** The drills that share one system, webhook-ingest reaching RabbitMQ through a proxy the drills control. */
async function runSharedSystemDrills(reports: DrillReport[]): Promise<void> {
  const run = async (drill: Drill, work: () => Promise<DrillReport>) => {
    if (!settings.only.has(drill)) return;
    const report = await work();
    reports.push(report);
    printReport(report);
  };
  const started = composeProject ? await attachCompose(composeProject) : await startOwnSystem();
  const { target, system, brokerProxy, postgresUrl } = started;
  const context = openDrillContext({
    target,
    system,
    brokerProxy,
    postgresUrl,
    seconds: settings.seconds,
    settleSeconds: settings.settleSeconds,
    log,
  });
  try {
    await run('broker', () => runBrokerOutageDrill(context, settings.webhookRate, settings.outageSeconds));
    await run('database', () => runDatabaseCutDrill(context, settings.cutEverySeconds));
    await run('ingest', () => runIngestCrashDrill(context, settings.webhookRate, settings.killEverySeconds));
    await run('duplicates', () => runDuplicateDeliveryDrill(context, settings.webhookRate));
  } catch (error) {
    console.error(system.logs());
    throw error;
  } finally {
    await closeDrillContext(context);
    await target.stop();
    await brokerProxy?.close();
  }
}

interface DrilledSystem {
  target: Target;
  system: DrillContext['system'];
  brokerProxy: DrillContext['brokerProxy'];
  postgresUrl: string;
}

/** Every service as a process of its own, webhook-ingest reaching RabbitMQ through a proxy the drills control. */
async function startOwnSystem(): Promise<DrilledSystem> {
  const { amqpUrl, postgresUrl } = await findInfrastructure();
  const broker = new URL(amqpUrl);
  const brokerProxy = await startTcpProxy({ host: broker.hostname, port: Number(broker.port || 5672) });
  const throughProxy = new URL(amqpUrl);
  throughProxy.hostname = '127.0.0.1';
  throughProxy.port = String(brokerProxy.port);
  log(`starting the system; webhook-ingest reaches RabbitMQ through a TCP proxy on :${brokerProxy.port}`);
  const target = await startTarget({
    // The drills confirm deposits themselves, so every confirmation is one they can account for: no sandbox runs.
    sandbox: false,
    serviceEnv: {
      'webhook-ingest': { AMQP_URL: throughProxy.toString() },
      identity: { TOKEN_TTL_SECONDS: '3600' },
    },
  }).catch(async (error: unknown) => {
    await brokerProxy.close();
    throw error;
  });
  if (!target.system) throw new Error('the drills need a system they started themselves');
  return { target, system: target.system, brokerProxy, postgresUrl };
}

/** A system docker compose runs: reached through its edge on 127.0.0.1, broken with `docker kill`. */
async function attachCompose(project: string): Promise<DrilledSystem> {
  const target = attachTarget(env);
  if (!env.BENCH_POSTGRES_URL)
    throw new Error('DRILL_COMPOSE_PROJECT needs BENCH_POSTGRES_URL (a superuser URL)');
  const faults = composeFaults(project, target);
  await faults.findLedger();
  const replicas = await Promise.all(
    ['gateway', 'ledger', 'webhook-ingest'].map(
      async (service) => `${service} ×${(await faults.replicas(service)).length}`,
    ),
  );
  log(`drilling compose project ${project} through ${target.gatewayUrl} (${replicas.join(', ')})`);
  return { target, system: faults, brokerProxy: null, postgresUrl: target.postgresUrl };
}

/**
 * Starts a drill's own system, runs the drill on it and prints its report; prints the system's logs when the drill
 * throws, and stops the system either way.
 */
async function runOnItsOwnSystem<Context>(
  reports: DrillReport[],
  what: string,
  start: (options: {
    seconds: number;
    settleSeconds: number;
    log: (message: string) => void;
  }) => Promise<{ context: Context; stop(): Promise<void> }>,
  run: (context: Context) => Promise<DrillReport>,
  logsOf: (context: Context) => string | undefined,
): Promise<void> {
  log(`starting a system of its own for the ${what}`);
  const { context, stop } = await start({
    seconds: settings.seconds,
    settleSeconds: settings.settleSeconds,
    log,
  });
  try {
    const report = await run(context);
    reports.push(report);
    printReport(report);
  } catch (error) {
    console.error(logsOf(context));
    throw error;
  } finally {
    await stop();
  }
}

/**
 * Each HA drill on a fresh cluster and a system of its own on it; the test kit takes the cluster's nodes from
 * TEST_AMQP_URL (set before anything asks it where RabbitMQ is) and provisions through node 3's management API.
 */
const brokerFaults: Record<(typeof HA_BROKER_DRILLS)[number], (cluster: BrokerCluster) => BrokerFault> = {
  'ha-broker-kill': killNode,
  // Long enough for the others to notice (net_ticktime 10 s in the cluster), healed with time to settle.
  'ha-broker-partition': (cluster) => partitionNode(cluster, Math.max(15, Math.floor(settings.seconds / 2))),
};

async function runHaBrokerDrills(reports: DrillReport[]): Promise<void> {
  for (const drill of haBrokerDrills) {
    const cluster = await startBrokerCluster(log);
    process.env.TEST_AMQP_URL = cluster.amqpUrl;
    process.env.TEST_AMQP_MANAGEMENT_URL = cluster.managementUrl;
    try {
      await runOnItsOwnSystem(
        reports,
        `${drill} drill (AMQP_URL lists the three nodes)`,
        async (options) => {
          const ha = await startHaSystem(cluster, options);
          // Removing the run's broker users fails if the fault took the node they are managed through; the cluster
          // and its users are deleted right after anyway.
          const stop = () => ha.stop().catch((error: Error) => log(`stopping the system: ${error.message}`));
          return { context: ha, stop };
        },
        (ha) => runHaBrokerDrill(ha, brokerFaults[drill](cluster)),
        (ha) => ha.context.system.logs(),
      );
    } finally {
      await cluster.clean();
    }
  }
}

/**
 * The HA drills against the compose `ha` profile (proof.sh --ha): its own clusters, broken with docker (kill, start,
 * network disconnect); the PostgreSQL ones first, then the broker ones, the broker made whole between them.
 */
async function runComposeHaDrills(project: string, reports: DrillReport[]): Promise<void> {
  const started = await attachCompose(project);
  const context = openDrillContext({
    ...started,
    seconds: settings.seconds,
    settleSeconds: settings.settleSeconds,
    log,
  });
  const report = (drilled: DrillReport) => {
    reports.push(drilled);
    printReport(drilled);
  };
  try {
    const patroni = composePatroniCluster(project, started.postgresUrl);
    for (const drill of haPostgresDrills)
      report(await runHaPostgresDrill({ ...context, cluster: patroni }, drill));
    if (haBrokerDrills.length === 0) return;
    if (!env.BENCH_AMQP_URL)
      throw new Error('the ha-broker-* drills on compose need BENCH_AMQP_URL (the administrator)');
    const cluster = composeBrokerCluster(project, env.BENCH_AMQP_URL);
    for (const drill of haBrokerDrills) {
      report(
        await runHaBrokerDrill(
          { context, cluster, stop: async () => undefined },
          brokerFaults[drill](cluster),
        ),
      );
      log('bringing the broker cluster back to three nodes');
      await cluster.clean();
    }
  } finally {
    await closeDrillContext(context);
    await started.target.stop();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const reports: DrillReport[] = [];
  if (composeProject && haPostgresDrills.length + haBrokerDrills.length > 0)
    await runComposeHaDrills(composeProject, reports);
  else {
    if (haPostgresDrills.length > 0)
      await runHaPostgresDrills(haPostgresDrills, { ...settings, log }, (report) => {
        reports.push(report);
        printReport(report);
      });
    if (haBrokerDrills.length > 0) await runHaBrokerDrills(reports);
  }
  if (settings.only.has('bank'))
    await runOnItsOwnSystem(
      reports,
      'bank drill (the ledger asks the sandbox; its events twice, out of order)',
      startBankDrillSystem,
      (context) => runBankDrill(context, settings.killEverySeconds),
      (context) => context.system.logs(),
    );
  if (SHARED_SYSTEM_DRILLS.some((drill) => settings.only.has(drill))) await runSharedSystemDrills(reports);
  if (settings.only.has('adversarial'))
    await runOnItsOwnSystem(
      reports,
      'adversarial drill (percentage fees, hold expiry 3 s)',
      startAdversarialSystem,
      async (context) => (await runAdversarialDrill(context)).report,
      (context) => context.target.system?.logs(),
    );
  if (settings.only.has('provider'))
    await runOnItsOwnSystem(
      reports,
      'provider drill (the ledger asks the sandbox, as it would ask Stripe)',
      startProviderDrillSystem,
      (context) => runProviderDrill(context, settings.killEverySeconds),
      (context) => context.system.logs(),
    );

  const total = reports.reduce((sum, report) => sum + discrepanciesOf(report), 0);
  console.log('');
  console.log('| drill | faults | money moved (USD) | discrepancies | result |');
  console.log('|---|---:|---:|---:|---|');
  for (const report of reports) {
    const discrepancies = discrepanciesOf(report);
    console.log(
      `| ${report.name} | ${report.faults.toLocaleString('en-US')} | ${formatUsd(report.moneyMovedMinor)} | ${discrepancies} | ${discrepancies === 0 ? 'pass' : 'FAIL'} |`,
    );
  }
  console.log(
    `\n${reports.length} drills, ${total} discrepancies, ${((Date.now() - started) / 1000).toFixed(0)} s` +
      ` (DRILL_SECONDS=${settings.seconds})`,
  );
  if (total > 0 || reports.length === 0) process.exitCode = 1;
}

await main();
