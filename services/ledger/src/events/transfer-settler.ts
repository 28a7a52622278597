import { randomUUID } from 'node:crypto';
import { createBatcher, type Logger, type OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import { settle, settleTransfer } from '../use-cases/settlement-requests.js';

/** How many transfers one database transaction settles at most. */
const BATCH_SIZE = 100;
/**
 * A transfer still pending this long after its acceptance was not settled by the process that accepted it (it
 * crashed, or its settlement failed): the recovery sweep settles it, unless its hold expired first.
 */
const RECOVERY_AGE_MS = 10_000;

export interface TransferSettler {
  /**
   * Settles an accepted (committed) transfer soon, with the others submitted meanwhile; never throws. One left
   * pending (a failed batch, a crash) is settled by the recovery sweep (maintenance) instead.
   */
  submit(transactionId: string, correlationId: string): void;
  /**
   * One recovery sweep now (one also runs at start and every `recoveryIntervalMs`): settles the transfers pending
   * for longer than RECOVERY_AGE_MS whose hold has not expired (those the hold expiry cancels). Resolves with how
   * many it found.
   */
  recover(): Promise<number>;
  /** Stops the sweeps and waits for the settlements under way. */
  stop(): Promise<void>;
}

export interface TransferSettlerOptions {
  store: LedgerStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  /** How often the recovery sweep looks for transfers left pending. */
  recoveryIntervalMs: number;
  now?: () => number;
}

interface Submitted {
  transactionId: string;
  correlationId: string;
}

/**
 * The ledger settles the transfers it accepts itself, in this process and without the broker: transfers
 * accepted meanwhile are settled together (group commit), one database transaction and a fixed number of
 * statements for up to BATCH_SIZE of them. Settling locks the transaction and ends it only while pending, so a
 * transfer settles once whoever gets to it (this process, another, or the recovery sweep).
 */
export function createTransferSettler({
  store,
  outbox,
  logger,
  holdExpiryMs,
  recoveryIntervalMs,
  now = Date.now,
}: TransferSettlerOptions): TransferSettler {
  const inFlight = new Set<Promise<unknown>>();
  const batcher = createBatcher<Submitted, number>(
    async (batch) => {
      const settled = await store.inTransaction((unit) =>
        settle(
          unit,
          batch.map(({ transactionId, correlationId }) =>
            settleTransfer(transactionId, { correlationId, logger }),
          ),
        ),
      );
      if (settled.length > 0) outbox.wake();
      return batch.map(() => 1);
    },
    { maxSize: BATCH_SIZE },
  );

  const submit = (item: Submitted) => {
    const settling = batcher.submit(item).catch((error: unknown) => {
      logger.warn(
        { err: error, transaction_id: item.transactionId },
        'a transfer could not be settled now; the recovery sweep settles it',
      );
    });
    inFlight.add(settling);
    void settling.finally(() => inFlight.delete(settling));
    return settling;
  };

  let sweeping: Promise<number> | null = null;
  const recover = () => {
    sweeping ??= (async () => {
      const ids = await store.pendingTransfers(
        new Date(now() - RECOVERY_AGE_MS),
        new Date(now() - holdExpiryMs),
        BATCH_SIZE * 10,
      );
      if (ids.length === 0) return 0;
      logger.info({ transfers: ids.length }, 'settling transfers left pending');
      const correlationId = `transfer-recovery:${randomUUID()}`;
      await Promise.all(ids.map((transactionId) => submit({ transactionId, correlationId })));
      return ids.length;
    })().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const sweep = () => {
    recover().catch((error: unknown) => logger.warn({ err: error }, 'transfer recovery sweep failed'));
  };
  const timer = setInterval(sweep, recoveryIntervalMs);
  timer.unref();
  // One sweep at start too: a process restarted more often than the interval would otherwise never sweep, and
  // the transfers its crashed predecessors left would wait for one that lives long enough.
  sweep();

  return {
    submit(transactionId, correlationId) {
      void submit({ transactionId, correlationId });
    },
    recover,
    async stop() {
      clearInterval(timer);
      await sweeping?.catch(() => undefined);
      await Promise.all(inFlight);
    },
  };
}
