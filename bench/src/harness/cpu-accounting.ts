import { readdir, readFile } from 'node:fs/promises';

/** CPU time each process has used so far, by label; read from /proc (Linux), in ms. */
export interface CpuSnapshot {
  at: number;
  /** Busy ms of the whole machine, all cores, from /proc/stat. */
  machineBusyMs: number;
  /** `ms`: user + kernel time; `kernelMs`: the kernel's part of it (system calls, the network stack). */
  byPid: Map<number, { label: string; ms: number; kernelMs: number }>;
}

/** Names a process from its command line and environment, or null to leave it out. */
export type ProcessLabeler = (process: { pid: number; cmdline: string; env: string }) => string | null;

export interface CpuUsage {
  /** CPU ms per label over the interval. */
  byLabel: Map<string, number>;
  /** Of that, the ms spent in the kernel (stime), per label. */
  kernelByLabel: Map<string, number>;
  /** Busy CPU ms of the machine over the interval, every process included. */
  machineBusyMs: number;
  intervalMs: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

async function readMachineBusyMs(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] as string;
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * TICK_MS;
}

export async function snapshotCpu(labeler: ProcessLabeler): Promise<CpuSnapshot> {
  const byPid = new Map<number, { label: string; ms: number; kernelMs: number }>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const [cmdline, env, stat] = await Promise.all([
        readFile(`/proc/${pid}/cmdline`, 'utf8'),
        readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''),
        readFile(`/proc/${pid}/stat`, 'utf8'),
      ]);
      const label = labeler({ pid, cmdline: cmdline.replaceAll('\0', ' ').trim(), env });
      if (!label) continue;
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const kernelMs = Number(fields[12]) * TICK_MS;
      byPid.set(pid, { label, ms: Number(fields[11]) * TICK_MS + kernelMs, kernelMs });
    } catch {
      // The process ended while we looked.
    }
  }
  return { at: Date.now(), machineBusyMs: await readMachineBusyMs(), byPid };
}

/** What each label used between two snapshots; a process that started in between counts from zero. */
export function cpuBetween(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuUsage | null {
  if (!before || !after) return null;
  const byLabel = new Map<string, number>();
  const kernelByLabel = new Map<string, number>();
  for (const [pid, { label, ms, kernelMs }] of after.byPid) {
    const earlier = before.byPid.get(pid);
    byLabel.set(label, (byLabel.get(label) ?? 0) + ms - (earlier?.ms ?? 0));
    kernelByLabel.set(label, (kernelByLabel.get(label) ?? 0) + kernelMs - (earlier?.kernelMs ?? 0));
  }
  return {
    byLabel,
    kernelByLabel,
    machineBusyMs: after.machineBusyMs - before.machineBusyMs,
    intervalMs: after.at - before.at,
  };
}

/**
 * Labels the processes of one system: its services (matched by the PORT in their environment), the PostgreSQL
 * backends serving its databases, the server's shared PostgreSQL processes, RabbitMQ, and this process.
 */
export function systemLabeler(ports: Record<string, number>, databaseSuffix: string): ProcessLabeler {
  const byPort = new Map(Object.entries(ports).map(([service, port]) => [String(port), service]));
  return ({ pid, cmdline, env }) => {
    if (pid === process.pid) return 'bench (load generator)';
    if (cmdline.startsWith('postgres:')) {
      const database = /^postgres: \S+: \S+ (\S+) /.exec(cmdline)?.[1];
      if (!database || /^postgres: \S+: (autovacuum|logical)/.test(cmdline))
        return 'postgres (shared: wal, checkpoint)';
      const ours = databaseSuffix ? database.endsWith(databaseSuffix) : /^payments_[a-z_]+$/.test(database);
      return ours ? `postgres: ${database.replace(databaseSuffix, '')}` : null;
    }
    if (cmdline.includes('beam.smp') && cmdline.includes('rabbit')) return 'rabbitmq';
    if (/\/(src\/main\.ts|dist\/main\.js)( |$)/.test(cmdline)) {
      const port = /(?:^|\0)PORT=(\d+)/.exec(env)?.[1];
      const service = port ? byPort.get(port) : undefined;
      return service ?? null;
    }
    return null;
  };
}
