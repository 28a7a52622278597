import { openLedgerDatabase } from './harness/ledger-db.js';
import { attachTarget } from './harness/target.js';
import { runLedgerAlone, runSaturatedPipeline } from './scenarios/deposit-pipeline.js';

// The deposit pipeline's throughput on a system docker compose runs (infra/containers/proof.sh runs it once per
// number of ledger replicas): pending deposits seeded in the ledger's database, then BENCH_SECONDS of signed
// payment_intent.succeeded events through the edge and the gateways (32 connections, as `pnpm bench` sends them),
// until every one is credited; then the ledger's half alone: BENCH_SECONDS × 1,000 PaymentProcessed events published
// straight onto its queue (BENCH_AMQP_URL, an administrator), until all are credited. The same measurements as
// `pnpm bench`'s "deposits: webhook → credit" and "deposits: ledger alone" rows.
// Addresses as for `pnpm bench` against a running system (BENCH_GATEWAY_URL, BENCH_POSTGRES_URL, BENCH_AMQP_URL,
// BENCH_WEBHOOK_SECRET, BENCH_SERVICE_TOKEN). Prints one JSON line.

const env = process.env;
const seconds = Number(env.BENCH_SECONDS ?? 10);
const connections = Number(env.BENCH_WEBHOOK_CONNECTIONS ?? 32);
const target = attachTarget(env);
const db = openLedgerDatabase(target.ledgerDatabaseUrl);
const log = (message: string) => console.error(`[pipeline] ${message}`);
try {
  log(`${seconds} s of signed webhooks through ${target.gatewayUrl}, ${connections} connections`);
  const context = { target, db, seconds, log, sampleCpu: async () => null };
  const run = await runSaturatedPipeline(context, {
    connections,
    ceilingPerSecond: Number(env.BENCH_PIPELINE_CEILING ?? 1500),
    viaGateway: true,
  });
  log(`${(seconds * 1000).toLocaleString('en-US')} PaymentProcessed straight onto the ledger's queue`);
  const alone = await runLedgerAlone(context, seconds * 1000);
  const { cpu: _cpu, ...figures } = run;
  const { cpu: _aloneCpu, ...aloneFigures } = alone;
  console.log(
    JSON.stringify({
      label: env.PIPELINE_LABEL ?? '',
      seconds,
      connections,
      ...figures,
      ledgerAlone: aloneFigures,
    }),
  );
  if (run.credited === 0 || run.credited < run.sent || alone.credited < alone.published) process.exitCode = 1;
} finally {
  await db.close();
}
