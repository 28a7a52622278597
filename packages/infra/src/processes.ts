import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SERVICE_NAMES,
  serviceDirectory,
  serviceEnvironment,
  type ServiceName,
  type SystemSettings,
} from './topology.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * How a service's process runs: `sources` is development (tsx on `src/`, and the `development` export condition
 * so the workspace packages it imports load from their sources too); `compiled` is plain `node` on `dist/main.js`
 * after `pnpm build`, resolving the other packages' `dist/` (their default export); `{ deployedAt }` is plain
 * `node dist/main.js` inside `<deployedAt>/<service>`, the folders `infra/deploy-folders.sh` makes, which are
 * what the production images hold.
 */
export type ServiceRuntime = 'sources' | 'compiled' | { deployedAt: string };

/** The arguments after `node` that start a service's process, and the directory it runs in. */
export function serviceCommand(
  service: ServiceName,
  runtime: ServiceRuntime = 'sources',
): { args: string[]; cwd: string } {
  const directory = serviceDirectory(service);
  if (typeof runtime === 'object')
    return { args: ['dist/main.js'], cwd: path.join(runtime.deployedAt, service) };
  if (runtime === 'compiled') return { args: [path.join(directory, 'dist/main.js')], cwd: ROOT };
  // Resolved on first use: tsx is a development tool, absent from a production install of this package.
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return {
    args: ['--conditions=development', '--import', tsx, path.join(directory, 'src/main.ts')],
    cwd: ROOT,
  };
}

export interface ProcessSystemOptions extends SystemSettings {
  services?: readonly ServiceName[];
  /** Where each line a service prints goes; by default it is kept for `logs()` only. */
  onOutput?: (service: ServiceName, line: string) => void;
  startTimeoutMs?: number;
  /** By default `sources` (tsx); `compiled` needs `pnpm build` first, `{ deployedAt }` the deploy folders. */
  runtime?: ServiceRuntime;
  /** The arguments after `node` that start a service instead of its own entry (a test's service with a fault). */
  commands?: Partial<Record<ServiceName, { args: string[]; cwd: string }>>;
}

export interface ProcessSystem {
  urls: Record<ServiceName, string>;
  gatewayUrl: string;
  /** The last lines each service printed, to explain a failure. */
  logs(service?: ServiceName): string;
  kill(service: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  restart(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Runs each service as its own Node process (see `ServiceRuntime`), and waits until each answers /health. */
export async function startProcessSystem(options: ProcessSystemOptions): Promise<ProcessSystem> {
  const services = options.services ?? SERVICE_NAMES;
  const host = options.host ?? '127.0.0.1';
  const running = new Map<ServiceName, Running>();
  const output = new Map<ServiceName, string[]>();
  const urls = Object.fromEntries(
    SERVICE_NAMES.map((name) => [name, `http://${host}:${options.ports[name]}`]),
  ) as Record<ServiceName, string>;

  const record = (service: ServiceName, chunk: Buffer) => {
    const lines = output.get(service) ?? [];
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      lines.push(line);
      options.onOutput?.(service, line);
    }
    output.set(service, lines.slice(-200));
  };

  const launch = (service: ServiceName): Running => {
    const { args, cwd } = options.commands?.[service] ?? serviceCommand(service, options.runtime);
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, ...serviceEnvironment(service, options) },
      // The IPC channel tells the service when this process dies without stopping it (runMain stops then).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.channel?.unref();
    child.stdout?.on('data', (chunk: Buffer) => record(service, chunk));
    child.stderr?.on('data', (chunk: Buffer) => record(service, chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const entry = { child, exited };
    running.set(service, entry);
    return entry;
  };

  const waitHealthy = async (service: ServiceName) => {
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    const entry = running.get(service) as Running;
    let exitCode: number | null | undefined;
    void entry.exited.then((code) => (exitCode = code));
    while (Date.now() < deadline) {
      if (exitCode !== undefined) {
        throw new Error(`${service} exited with code ${exitCode} while starting:\n${logs(service)}`);
      }
      const healthy = await fetch(`${urls[service]}/health`, { signal: AbortSignal.timeout(1000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (healthy) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${service} did not answer /health in time:\n${logs(service)}`);
  };

  const logs = (service?: ServiceName) =>
    (service ? [service] : services)
      .map((name) => `--- ${name}\n${(output.get(name) ?? []).join('\n')}`)
      .join('\n');

  const kill = async (service: ServiceName, signal: NodeJS.Signals = 'SIGTERM') => {
    const entry = running.get(service);
    if (!entry || entry.child.exitCode !== null || entry.child.signalCode !== null) return;
    entry.child.kill(signal);
    const timer = setTimeout(() => entry.child.kill('SIGKILL'), 15_000);
    await entry.exited;
    clearTimeout(timer);
  };

  const stop = async () => {
    for (const service of [...services].reverse()) await kill(service);
  };

  try {
    for (const service of services) launch(service);
    await Promise.all(services.map(waitHealthy));
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    urls,
    gatewayUrl: urls.gateway,
    logs,
    kill,
    async restart(service) {
      await kill(service);
      launch(service);
      await waitHealthy(service);
    },
    stop,
  };
}
