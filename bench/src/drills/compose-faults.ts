import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { composeContainers, type ServiceName } from '@payments/infra';
import type { Target } from '../harness/target.js';
import type { DrillFaults } from './drill-context.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args, { timeout: 120_000 })).stdout.trim();

/**
 * The faults of a system docker compose runs (project `project`): SIGKILL of one replica of a service at a time, in
 * turn (`docker kill`), and its restart (`docker start`) until it answers /health inside its container again.
 * Talks to the Docker engine only; the drills' traffic still goes through the edge on 127.0.0.1.
 */
export function composeFaults(
  project: string,
  target: Pick<Target, 'ledgerUrl'>,
): DrillFaults & { replicas(service: string): Promise<string[]>; findLedger(): Promise<void> } {
  const turn = new Map<string, number>();
  const killed = new Map<string, string>();
  const replicas = (service: string) =>
    composeContainers(project, service, { includeStopped: true, timeoutMs: 120_000 });
  const healthy = async (container: string) => {
    try {
      await docker(
        'exec',
        container,
        'node',
        '-e',
        "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))",
      );
      return true;
    } catch {
      return false;
    }
  };
  // The ledger's /internal/audit, for the books: a replica's port published on 127.0.0.1 (the drill override
  // infra/containers/compose.drill.yml publishes each on an ephemeral port, which a restart may change).
  const findLedger = async () => {
    for (const container of await replicas('ledger')) {
      const published = await docker('port', container, '3002/tcp').catch(() => '');
      const address = published.split('\n').find((line) => line.startsWith('127.0.0.1:'));
      if (address) {
        target.ledgerUrl = `http://${address}`;
        return;
      }
    }
    throw new Error(
      `no ledger replica of ${project} publishes 3002 on 127.0.0.1 (infra/containers/compose.drill.yml)`,
    );
  };
  return {
    replicas,
    findLedger,
    async kill(service: ServiceName, signal: NodeJS.Signals = 'SIGKILL') {
      const all = await replicas(service);
      if (all.length === 0) throw new Error(`no container of ${service} in compose project ${project}`);
      const index = turn.get(service) ?? 0;
      turn.set(service, index + 1);
      const container = all[index % all.length] as string;
      killed.set(service, container);
      await docker('kill', '--signal', signal.replace(/^SIG/, ''), container);
    },
    async restart(service: ServiceName) {
      const container = killed.get(service);
      if (!container) return;
      // The restart policy may have started it already; `docker start` of a running container does nothing.
      await docker('start', container);
      const until = Date.now() + 60_000;
      while (!(await healthy(container))) {
        if (Date.now() > until)
          throw new Error(`${container} did not answer /health within 60 s of its restart`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (service === 'ledger') await findLedger();
    },
    logs: (service?: ServiceName) =>
      `(the containers' logs: docker logs, compose project ${project}${service ? `, service ${service}` : ''})`,
  };
}
