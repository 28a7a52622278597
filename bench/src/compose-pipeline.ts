import { createPaymentsApi } from './harness/api.js';
import { openLedgerDatabase } from './harness/ledger-db.js';
import { attachTarget } from './harness/target.js';
import { runSaturatedPipeline } from './scenarios/deposit-pipeline.js';

// The deposit pipeline's throughput on a system docker compose runs (infra/containers/proof.sh runs it once per
// number of ledger replicas): pending deposits seeded in the ledger's database, then BENCH_SECONDS of signed
// payment_intent.succeeded events through the edge and the gateways (32 connections, as `pnpm bench` sends them),
// until every one is credited. The same measurement as `pnpm bench`'s "deposits: webhook → credit" row.
// Addresses as for `pnpm bench` against a running system (BENCH_GATEWAY_URL, BENCH_POSTGRES_URL, BENCH_AMQP_URL,
// BENCH_WEBHOOK_SECRET, BENCH_SERVICE_TOKEN). Prints one JSON line.

const env = process.env;
const seconds = Number(env.BENCH_SECONDS ?? 10);
const connections = Number(env.BENCH_WEBHOOK_CONNECTIONS ?? 32);
const target = attachTarget(env);
const api = createPaymentsApi(target.gatewayUrl);
const db = openLedgerDatabase(target.ledgerDatabaseUrl);
const log = (message: string) => console.error(`[pipeline] ${message}`);
try {
  log(`${seconds} s of signed webhooks through ${target.gatewayUrl}, ${connections} connections`);
  const run = await runSaturatedPipeline(
    { target, api, db, seconds, log, sampleCpu: async () => null },
    { connections, ceilingPerSecond: Number(env.BENCH_PIPELINE_CEILING ?? 1500), viaGateway: true },
  );
  const { cpu: _cpu, ...figures } = run;
  console.log(JSON.stringify({ label: env.PIPELINE_LABEL ?? '', seconds, connections, ...figures }));
  if (run.credited === 0 || run.credited < run.sent) process.exitCode = 1;
} finally {
  api.close();
  await db.close();
}
