import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, '../../../infra/ha/postgres-patroni.sh');
/** The REST ports infra/ha/postgres-patroni.sh gives its two nodes (HA_PG_NODE1_REST_PORT, …). */
const REST_PORTS = [
  Number(process.env.HA_PG_NODE1_REST_PORT ?? 18008),
  Number(process.env.HA_PG_NODE2_REST_PORT ?? 18009),
];

export interface PatroniMember {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/**
 * The PostgreSQL cluster infra/ha/postgres-patroni.sh runs on 127.0.0.1: Patroni decides who the primary is, the
 * drills only lose and bring back nodes and read what Patroni's REST API says.
 */
export interface PatroniCluster {
  /** The superuser URL through HAProxy, the maintenance database. */
  url: string;
  members(): Promise<PatroniMember[]>;
  /** SIGKILL of a node's Patroni, postmaster and backends. */
  killNode(name: string): Promise<void>;
  startNode(name: string): Promise<void>;
  down(): Promise<void>;
}

const script = async (...args: string[]) =>
  (await run('bash', [SCRIPT, ...args], { timeout: 300_000, maxBuffer: 1 << 22 })).stdout;

/** Brings the cluster up (or finds it up) and waits for a leader and a streaming synchronous standby. */
export async function startPatroniCluster(log: (message: string) => void): Promise<PatroniCluster> {
  log('PostgreSQL under Patroni: bash infra/ha/postgres-patroni.sh up');
  await script('up').catch((error: { stderr?: string; message: string }) => {
    throw new Error(`infra/ha/postgres-patroni.sh up failed:\n${error.stderr ?? error.message}`);
  });
  const port = process.env.HA_PG_PORT ?? '15432';
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async members() {
      for (const rest of REST_PORTS) {
        const answer = await fetch(`http://127.0.0.1:${rest}/cluster`, {
          signal: AbortSignal.timeout(2000),
        }).catch(() => null);
        if (answer?.ok) return ((await answer.json()) as { members: PatroniMember[] }).members;
      }
      return [];
    },
    killNode: async (name) => void (await script('kill-node', name)),
    startNode: async (name) => void (await script('start-node', name)),
    down: async () => void (await script('down')),
  };
}
