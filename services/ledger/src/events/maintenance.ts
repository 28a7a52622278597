import { randomUUID } from 'node:crypto';
import { startPoller, type Logger, type OutboxRelay } from '@payments/service-kit';
import type { LedgerStore, LedgerUnit } from '../data/ledger-store.js';
import type { FlowContext } from '../use-cases/settlement-requests.js';
import { expireDeposit, expireHold } from './settlement-flows.js';

export interface MaintenanceOptions {
  store: LedgerStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  depositExpiryMs: number;
  idempotencyTtlMs: number;
  intervalMs: number;
  now?: () => number;
}

export interface HoldExpiries {
  canceled: number;
  /** Withdrawals the provider may have received: kept pending, awaiting reconciliation. */
  flagged: number;
  /** Deposits nobody paid in time, canceled. */
  expiredDeposits: number;
}

export interface Maintenance {
  /** One pass now; resolves with what it did to expired holds. */
  runOnce(): Promise<HoldExpiries>;
  stop(): Promise<void>;
}

const BATCH = 100;
const COMPACTION_BATCH = 10_000;
const COMPACTION_INTERVAL_MS = 1_000;
/** While compactions find nothing to fold, the wait between them doubles up to this. */
const COMPACTION_IDLE_MAX_MS = 5_000;

/** Runs `task` every `intervalMs`, never two at once; `run` starts one now or joins the one under way. */
function repeat<T>(intervalMs: number, task: () => Promise<T>, onError: (error: unknown) => void) {
  let running: Promise<T> | null = null;
  const run = () => {
    running ??= task().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => run().catch(onError), intervalMs);
  timer.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/**
 * Periodic upkeep run by every ledger process (conditional updates make concurrent passes harmless):
 * ends holds past their expiry (see expireHold) and deposits nobody paid in time (expireDeposit), forgets
 * idempotency keys past their retention, and compacts the history counters (one process at a time, the others skip).
 */
export function startMaintenance(options: MaintenanceOptions): Maintenance {
  const { store, outbox, logger } = options;
  const now = options.now ?? Date.now;
  let stopped = false;

  /**
   * Finds what expired before `expiryMs` ago, a batch at a time, and ends each in a database transaction of its own
   * under its correlation `prefix`.
   */
  const sweep = async <T>(
    expiryMs: number,
    find: (cutoff: Date, limit: number) => Promise<string[]>,
    prefix: string,
    end: (unit: LedgerUnit, id: string, cutoff: Date, context: FlowContext) => Promise<T>,
    counted: (outcome: T) => void,
  ) => {
    const cutoff = new Date(now() - expiryMs);
    for (;;) {
      const ids = await find(cutoff, BATCH);
      for (const id of ids) {
        if (stopped) return;
        const context = { correlationId: `${prefix}:${randomUUID()}`, logger };
        counted(await store.inTransaction((unit) => end(unit, id, cutoff, context)));
      }
      if (ids.length < BATCH) return;
    }
  };

  const pass = async (): Promise<HoldExpiries> => {
    const expiries: HoldExpiries = { canceled: 0, flagged: 0, expiredDeposits: 0 };
    await sweep(options.holdExpiryMs, store.expiredHolds, 'hold-expiry', expireHold, (done) => {
      if (done) expiries[done] += 1;
    });
    await sweep(options.depositExpiryMs, store.expiredDeposits, 'deposit-expiry', expireDeposit, (done) => {
      if (done) expiries.expiredDeposits += 1;
    });
    if (expiries.canceled > 0) logger.info({ canceled: expiries.canceled }, 'canceled expired holds');
    if (expiries.expiredDeposits > 0)
      logger.info({ canceled: expiries.expiredDeposits }, 'canceled unpaid deposits');
    if (expiries.canceled + expiries.expiredDeposits > 0) outbox.wake();
    await store.deleteIdempotencyKeysBefore(new Date(now() - options.idempotencyTtlMs));
    return expiries;
  };

  // A full batch means more may be waiting: keep folding, one bounded transaction at a time.
  // Whether it folded anything: an idle ledger compacts every few seconds, a busy one every second.
  const compactHistoryCounts = async () => {
    let moved = COMPACTION_BATCH;
    let folded = 0;
    while (!stopped && moved === COMPACTION_BATCH) {
      moved = await store.compactHistoryCounts(COMPACTION_BATCH);
      folded += moved;
    }
    return folded > 0;
  };

  const upkeep = repeat(options.intervalMs, pass, (error) =>
    logger.warn({ err: error }, 'ledger maintenance pass failed'),
  );
  const compaction = startPoller({
    intervalMs: COMPACTION_INTERVAL_MS,
    idleMaxMs: COMPACTION_IDLE_MAX_MS,
    task: compactHistoryCounts,
    onError: (error) => logger.warn({ err: error }, 'history count compaction failed'),
  });

  return {
    runOnce: upkeep.run,
    async stop() {
      stopped = true;
      await Promise.all([upkeep.stop(), compaction.stop()]);
    },
  };
}
