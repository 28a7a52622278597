import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { composeContainers } from '@payments/infra';
import { sleep } from '../harness/load.js';
import { management, type BrokerCluster } from './ha-broker-drill.js';
import type { PatroniCluster, PatroniMember } from './patroni-cluster.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args, { timeout: 120_000 })).stdout.trim();

/** The one container of `service` in the compose project (running or not). */
async function containerOf(project: string, service: string): Promise<string> {
  const [container] = await composeContainers(project, service, { includeStopped: true, timeoutMs: 60_000 });
  if (!container)
    throw new Error(`no container of ${service} in compose project ${project} (the ha profile)`);
  return container;
}

/**
 * A container's address on the project's default network, which this machine reaches directly (the bridge): the
 * drills look at each node itself, not through a published port, which would answer for a node cut off.
 */
async function addressOf(container: string, network: string): Promise<string> {
  const ip = await docker(
    'inspect',
    '-f',
    `{{with index .NetworkSettings.Networks "${network}"}}{{.IPAddress}}{{end}}`,
    container,
  );
  if (!ip) throw new Error(`${container} has no address on ${network} (stopped, or cut off)`);
  return ip;
}

const BROKER_SERVICES = ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3'] as const;

/**
 * The `ha` profile's RabbitMQ cluster (infra/compose/ha.yml): node 1 is the service `rabbitmq`, nodes 2 and 3
 * `rabbitmq-2` and `rabbitmq-3`. A kill is `docker kill` (SIGKILL), a partition `docker network disconnect` from the
 * project's network (the node loses its peers and its clients), healed by connecting it again under its name.
 * `clean` starts a killed node again and waits until all three run and every quorum queue has its three members
 * online, so the next drill starts whole. Admin credentials from `amqpUrl` (the proof's BENCH_AMQP_URL).
 */
export function composeBrokerCluster(project: string, amqpUrl: string): BrokerCluster {
  const network = `${project}_default`;
  const admin = new URL(amqpUrl);
  const service = (node: number) => BROKER_SERVICES[node - 1] as string;
  const cut = new Set<number>();
  const credentials = {
    username: decodeURIComponent(admin.username),
    password: decodeURIComponent(admin.password),
  };
  const cluster: BrokerCluster = {
    nameOf: service,
    nodeOf: (erlangNode) => {
      const index = BROKER_SERVICES.indexOf(
        erlangNode.replace(/^rabbit@/, '') as (typeof BROKER_SERVICES)[number],
      );
      return index < 0 ? undefined : index + 1;
    },
    management: async (node) => ({
      host: await addressOf(await containerOf(project, service(node)), network),
      port: 15672,
    }),
    // Asked inside its container, which a partition does not cut off from it: paused by pause_minority, it is not
    // running; killed, the exec fails.
    serves: async (node) =>
      docker(
        'exec',
        await containerOf(project, service(node)),
        'rabbitmq-diagnostics',
        '-q',
        'check_running',
      ).then(
        () => true,
        () => false,
      ),
    credentials,
    kill: async (node) => void (await docker('kill', await containerOf(project, service(node)))),
    async partition(node) {
      await docker('network', 'disconnect', network, await containerOf(project, service(node)));
      cut.add(node);
    },
    partitionHow: `docker network disconnect from ${network}: it loses its peers and its clients`,
    async heal() {
      for (const node of cut) {
        await docker(
          'network',
          'connect',
          '--alias',
          service(node),
          network,
          await containerOf(project, service(node)),
        );
        cut.delete(node);
      }
    },
    async clean() {
      await cluster.heal();
      for (const node of [1, 2, 3]) await docker('start', await containerOf(project, service(node)));
      const deadline = Date.now() + 180_000;
      for (;;) {
        const state = await wholeCluster().catch((error: Error) => error.message);
        if (state === true) return;
        if (Date.now() > deadline)
          throw new Error(`the broker cluster is not whole again within 180 s: ${state}`);
        await sleep(2000);
      }
    },
  };
  /** True once all three nodes run and every quorum queue has three members online; else what is missing. */
  const wholeCluster = async (): Promise<true | string> => {
    const nodes = await management<{ name: string; running: boolean }[]>(cluster, 'nodes');
    const running = nodes.filter((n) => n.running).length;
    if (running < 3) return `${running} of 3 nodes running`;
    const queues = await management<{ name: string; type: string; online?: string[] }[]>(
      cluster,
      'queues/%2F?columns=name,type,online',
    );
    const short = queues.filter((queue) => queue.type === 'quorum' && (queue.online ?? []).length < 3);
    return short.length === 0
      ? true
      : `quorum queues without 3 online members: ${short.map((q) => q.name).join(', ')}`;
  };
  return cluster;
}

const PATRONI_SERVICES = ['postgres-1', 'postgres-2'] as const;

/**
 * The `ha` profile's PostgreSQL under Patroni (postgres-1, postgres-2, etcd ×3) behind HAProxy, the service
 * `postgres`: `url` is the superuser URL through HAProxy's published port (the proof's BENCH_POSTGRES_URL). Losing a
 * node is `docker kill` of its container (Patroni, the postmaster and every backend at once), bringing it back
 * `docker start`; Patroni's REST API is read on each node's own address.
 */
export function composePatroniCluster(project: string, url: string): PatroniCluster {
  const network = `${project}_default`;
  return {
    url,
    async members() {
      for (const service of PATRONI_SERVICES) {
        const host = await containerOf(project, service)
          .then((container) => addressOf(container, network))
          .catch(() => null);
        if (!host) continue;
        const answer = await fetch(`http://${host}:8008/cluster`, {
          signal: AbortSignal.timeout(2000),
        }).catch(() => null);
        if (answer?.ok) return ((await answer.json()) as { members: PatroniMember[] }).members;
      }
      return [];
    },
    killNode: async (name) => void (await docker('kill', await containerOf(project, name))),
    startNode: async (name) => void (await docker('start', await containerOf(project, name))),
    // The proof takes the whole project down.
    down: async () => undefined,
  };
}
