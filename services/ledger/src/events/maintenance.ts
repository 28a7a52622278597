import { randomUUID } from 'node:crypto';
import type { Logger, OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import { cancelExpiredHold } from './settlement-flows.js';

export interface MaintenanceOptions {
  store: LedgerStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  idempotencyTtlMs: number;
  intervalMs: number;
  now?: () => number;
}

export interface Maintenance {
  /** One pass now; resolves with how many holds it canceled. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

const BATCH = 100;

/**
 * Periodic upkeep run by every ledger process (conditional updates make concurrent passes harmless):
 * cancels holds past their expiry and forgets idempotency keys past their retention.
 */
export function startMaintenance(options: MaintenanceOptions): Maintenance {
  const { store, outbox, logger } = options;
  const now = options.now ?? Date.now;
  let running: Promise<number> | null = null;
  let stopped = false;

  const expireHolds = async (): Promise<number> => {
    const cutoff = new Date(now() - options.holdExpiryMs);
    let canceled = 0;
    for (;;) {
      const ids = await store.expiredHolds(cutoff, BATCH);
      for (const id of ids) {
        if (stopped) return canceled;
        const context = { correlationId: `hold-expiry:${randomUUID()}`, logger };
        const done = await store.inTransaction((unit) => cancelExpiredHold(unit, id, cutoff, context));
        if (done) canceled += 1;
      }
      if (ids.length < BATCH) return canceled;
    }
  };

  const pass = async (): Promise<number> => {
    const canceled = await expireHolds();
    if (canceled > 0) {
      logger.info({ canceled }, 'canceled expired holds');
      outbox.wake();
    }
    await store.deleteIdempotencyKeysBefore(new Date(now() - options.idempotencyTtlMs));
    return canceled;
  };

  const runOnce = () => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => logger.warn({ err: error }, 'ledger maintenance pass failed'));
  }, options.intervalMs);
  timer.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
