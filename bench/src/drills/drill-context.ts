import pg from 'pg';
import type { TestSystem } from '@payments/testkit';
import { createHttpClient, type HttpClient } from '../harness/http-client.js';
import { BENCH_APPLICATION, openLedgerDatabase, type LedgerDatabase } from '../harness/ledger-db.js';
import type { Target } from '../harness/target.js';
import type { TcpProxy } from '@payments/testkit';

/** How a drill breaks the system: the processes the drill started, or a compose project's containers. */
export type DrillFaults = Pick<TestSystem, 'kill' | 'restart' | 'logs'>;

/** The system every drill breaks, and the handles to break and inspect it. */
export interface DrillContext {
  target: Target;
  system: DrillFaults;
  /**
   * Raw HTTP through the gateway, for what the typed client must not send: the provider's webhooks, and clients'
   * requests under faults that retry with a fixed Idempotency-Key on their own schedule. Set-up and checks use
   * `@payments/client` (harness/users.ts).
   */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  webhookDb: pg.Pool;
  /** The server's maintenance database, for pg_stat_activity and pg_terminate_backend. */
  adminDb: pg.Pool;
  /** Sits between webhook-ingest and RabbitMQ; null against a system the drills did not start. */
  brokerProxy: TcpProxy | null;
  /** How long each drill's fault phase lasts. */
  seconds: number;
  /** How long accepted work may take to finish once the faults stop. */
  settleSeconds: number;
  log(message: string): void;
}

/** What a drill prints: what it broke, what it did, what it checked and what it found. */
export interface DrillReport {
  name: string;
  injected: string[];
  operations: Record<string, number>;
  faults: number;
  /** Minor units (USD cents) moved by operations that completed. */
  moneyMovedMinor: bigint;
  checks: { name: string; ok: boolean; detail: string; discrepancies: number }[];
  durationMs: number;
}

/**
 * How long the ledger leaves a call to the provider that a crash cut short before making it again (LEASE_MS in
 * services/ledger/src/use-cases/provider-requests.ts): a drill that kills the ledger settles for at least this long.
 */
export const PROVIDER_CALL_LEASE_MS = 45_000;

export const discrepanciesOf = (report: DrillReport) =>
  report.checks.reduce((sum, check) => sum + check.discrepancies, 0);

/**
 * The handles a drill reads the system through, on `target`: raw HTTP, the ledger's and webhook-ingest's databases,
 * and the server's maintenance database at `postgresUrl`.
 */
export function openDrillContext(
  parts: Pick<DrillContext, 'target' | 'system' | 'brokerProxy' | 'seconds' | 'settleSeconds' | 'log'> & {
    postgresUrl: string;
  },
): DrillContext {
  const { postgresUrl, ...rest } = parts;
  const context: DrillContext = {
    ...rest,
    gateway: createHttpClient(parts.target.gatewayUrl, 128),
    ledgerDb: openLedgerDatabase(parts.target.ledgerDatabaseUrl),
    webhookDb: new pg.Pool({
      connectionString: parts.target.webhookDatabaseUrl,
      max: 2,
      application_name: BENCH_APPLICATION,
    }),
    adminDb: new pg.Pool({ connectionString: postgresUrl, max: 1, application_name: BENCH_APPLICATION }),
  };
  context.webhookDb.on('error', () => undefined);
  context.adminDb.on('error', () => undefined);
  return context;
}

/** Closes what openDrillContext opened (not the system). */
export async function closeDrillContext(context: DrillContext): Promise<void> {
  context.gateway.close();
  await context.ledgerDb.close();
  await context.webhookDb.end();
  await context.adminDb.end();
}
