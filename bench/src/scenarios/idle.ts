import type { ProcessLabeler } from '../harness/cpu-accounting.js';
import { snapshotUsage, usageBetween, type LabelUsage } from '../harness/process-usage.js';
import type { BenchContext } from './bench-context.js';

export interface IdleOptions {
  /** How long the system is left alone after it answered ready, before measuring. */
  settleSeconds: number;
  /** How long the measurement lasts. */
  seconds: number;
  labeler: ProcessLabeler;
}

export interface IdleService {
  service: string;
  /** The service's own process (and children), as a share of one core. */
  coreShare: number;
  rssMiB: number;
  pssMiB: number;
  /** The PostgreSQL backends serving its database: CPU share of one core, their count and Pss. */
  database: { coreShare: number; backends: number; pssMiB: number } | null;
}

export interface IdleRun {
  settleSeconds: number;
  intervalSeconds: number;
  services: IdleService[];
  /** The services and their databases' backends, the system's own work, as a share of one core. */
  systemCoreShare: number;
  servicesCoreShare: number;
  databasesCoreShare: number;
  rssMiB: number;
  /** Shared with every other user of this machine's servers, so not counted: PostgreSQL's own processes, RabbitMQ. */
  shared: { label: string; coreShare: number }[];
}

const MiB = (kib: number) => kib / 1024;
const DATABASE_PREFIX = 'postgres: payments_';
const SHARED = new Set(['rabbitmq', 'postgres (shared: wal, checkpoint)']);

/**
 * Leaves the whole system alone: waits `settleSeconds` after it answered ready, then measures for `seconds`
 * the CPU each service's processes and its database's backends use, and the memory they hold at the end.
 */
export async function runIdle(context: BenchContext, options: IdleOptions): Promise<IdleRun> {
  const services = Object.keys(context.target.ports);
  context.log(
    `idle: settling ${options.settleSeconds} s, then measuring ${options.seconds} s with no traffic`,
  );
  await new Promise((resolve) => setTimeout(resolve, options.settleSeconds * 1000));
  const before = await snapshotUsage(options.labeler);
  await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
  const after = await snapshotUsage(options.labeler);
  const usage = usageBetween(before, after);
  const byLabel = new Map(usage.map((entry) => [entry.label, entry]));
  const databaseOf = (service: string): LabelUsage | undefined =>
    byLabel.get(`${DATABASE_PREFIX}${service.replaceAll('-', '_')}`);

  // A service this system does not run (the provider sandbox, without one deployed) has no row.
  const rows: IdleService[] = services
    .filter((service) => byLabel.has(service))
    .map((service) => {
      const own = byLabel.get(service);
      const database = databaseOf(service);
      return {
        service,
        coreShare: own?.coreShare ?? 0,
        rssMiB: MiB(own?.rssKiB ?? 0),
        pssMiB: MiB(own?.pssKiB ?? 0),
        database: database
          ? { coreShare: database.coreShare, backends: database.processes, pssMiB: MiB(database.pssKiB) }
          : null,
      };
    });
  const servicesCoreShare = rows.reduce((sum, row) => sum + row.coreShare, 0);
  const databasesCoreShare = rows.reduce((sum, row) => sum + (row.database?.coreShare ?? 0), 0);
  return {
    settleSeconds: options.settleSeconds,
    intervalSeconds: (after.at - before.at) / 1000,
    services: rows,
    systemCoreShare: servicesCoreShare + databasesCoreShare,
    servicesCoreShare,
    databasesCoreShare,
    rssMiB: rows.reduce((sum, row) => sum + row.rssMiB, 0),
    shared: usage
      .filter((entry) => SHARED.has(entry.label))
      .map((entry) => ({ label: entry.label, coreShare: entry.coreShare })),
  };
}

const percent = (share: number) => `${(share * 100).toFixed(2)} %`;

/** The per-service table printed after the main one. */
export function renderIdleTable(run: IdleRun): string {
  const header = [
    'service',
    'CPU (one core)',
    'RSS MB',
    'PSS MB',
    'its DB backends: CPU',
    'backends',
    'PSS MB',
  ];
  const lines = run.services.map((row) => [
    row.service,
    percent(row.coreShare),
    row.rssMiB.toFixed(0),
    row.pssMiB.toFixed(0),
    row.database ? percent(row.database.coreShare) : '—',
    row.database ? String(row.database.backends) : '—',
    row.database ? row.database.pssMiB.toFixed(0) : '—',
  ]);
  const dbPss = run.services.reduce((sum, row) => sum + (row.database?.pssMiB ?? 0), 0);
  const dbBackends = run.services.reduce((sum, row) => sum + (row.database?.backends ?? 0), 0);
  lines.push([
    'total',
    percent(run.servicesCoreShare),
    run.rssMiB.toFixed(0),
    run.services.reduce((sum, row) => sum + row.pssMiB, 0).toFixed(0),
    percent(run.databasesCoreShare),
    String(dbBackends),
    dbPss.toFixed(0),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => (line[column] as string).length)),
  );
  const format = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(' | ')} |`;
  return [
    format(header),
    `|${widths.map((width, column) => (column === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`,
    ...lines.map(format),
  ].join('\n');
}
