import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { composeContainers } from '@payments/infra';

// `node --import tsx scripts/containers-spread.ts` (infra/containers/proof.sh runs it after load): how the load
// spread over the replicas of a compose project (COMPOSE_PROJECT_NAME, default payments). Per gateway: requests
// served other than /health and /metrics; per webhook-ingest: provider webhooks received (both from the
// replica's own /metrics, read inside its container with the service token); per ledger: messages RabbitMQ
// delivered to the consumers that replica's connections hold (management API on 127.0.0.1:15672). Asserts that
// every replica of each took a share; prints one JSON line.

const ROOT = path.resolve(import.meta.dirname, '..');
const project = process.env.COMPOSE_PROJECT_NAME ?? 'payments';
const docker = async (...args: string[]) =>
  (await promisify(execFile)('docker', args, { timeout: 60_000 })).stdout.trim();

const env = parseEnv(await readFile(path.join(ROOT, '.env'), 'utf8')) as Record<string, string>;

const replicas = (service: string) => composeContainers(project, service);

/** The replica's own /metrics, fetched inside its container (its port is not published). */
const metricsOf = (container: string) =>
  docker(
    'exec',
    container,
    'node',
    '-e',
    "fetch('http://127.0.0.1:'+process.env.PORT+'/metrics',{headers:{authorization:'Bearer '+process.env.SERVICE_TOKEN.split(',')[0]}}).then(r=>r.text()).then(t=>process.stdout.write(t))",
  );

const sum = (text: string, keep: (line: string) => boolean) =>
  text
    .split('\n')
    .filter((line) => !line.startsWith('#') && keep(line))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

const gateway: Record<string, number> = {};
for (const container of await replicas('gateway'))
  gateway[container] = sum(
    await metricsOf(container),
    (line) =>
      line.startsWith('http_request_duration_seconds_count{') &&
      !/route="\/(health|metrics|ready)"/.test(line),
  );

const webhookIngest: Record<string, number> = {};
for (const container of await replicas('webhook-ingest'))
  webhookIngest[container] = sum(await metricsOf(container), (line) =>
    line.startsWith('webhook_events_received_total{'),
  );

// RabbitMQ's view: deliveries per channel of the ledger's user, grouped by the address of the connection's peer.
const auth = Buffer.from(`${env.RABBITMQ_ADMIN_USER}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString('base64');
const channels = (await (
  await fetch('http://127.0.0.1:15672/api/channels?columns=user,connection_details,message_stats', {
    headers: { authorization: `Basic ${auth}` },
  })
).json()) as {
  user: string;
  connection_details?: { peer_host?: string };
  message_stats?: { deliver_get?: number };
}[];
const ledger: Record<string, number> = {};
for (const container of await replicas('ledger')) {
  const addresses = (
    await docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', container)
  ).split(' ');
  ledger[container] = channels
    .filter((c) => c.user === 'ledger' && addresses.includes(c.connection_details?.peer_host ?? ''))
    .reduce((total, c) => total + (c.message_stats?.deliver_get ?? 0), 0);
}

const spread = { gateway, 'webhook-ingest': webhookIngest, ledger };
console.log(JSON.stringify(spread));
const idle = Object.entries(spread).flatMap(([service, counts]) =>
  Object.keys(counts).length < 2
    ? [`${service}: ${Object.keys(counts).length} replica(s)`]
    : Object.entries(counts)
        .filter(([, count]) => count === 0)
        .map(([container]) => `${container} took no share`),
);
if (idle.length > 0) {
  console.error(`the load did not reach every replica: ${idle.join('; ')}`);
  process.exit(1);
}
