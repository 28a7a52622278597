import { randomUUID } from 'node:crypto';
import { createBatcher, type Logger, type OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import { settle, settleTransfer } from './settlement-flows.js';

/** How many transfers one database transaction settles at most. */
const BATCH_SIZE = 100;

export interface TransferSettler {
  /**
   * Settles an accepted (committed) transfer soon, with the others submitted meanwhile; never throws. One left
   * pending (a failed batch, a crash) is settled by the recovery sweep (maintenance) instead.
   */
  submit(transactionId: string, correlationId: string): void;
  /** Settles pending transfers accepted between `notBefore` and `acceptedBefore`; resolves with how many it found. */
  recover(acceptedBefore: Date, notBefore: Date): Promise<number>;
  /** Waits for the settlements under way. */
  stop(): Promise<void>;
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
}: {
  store: LedgerStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
}): TransferSettler {
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

  return {
    submit(transactionId, correlationId) {
      void submit({ transactionId, correlationId });
    },
    async recover(acceptedBefore, notBefore) {
      const ids = await store.pendingTransfers(acceptedBefore, notBefore, BATCH_SIZE * 10);
      if (ids.length === 0) return 0;
      const correlationId = `transfer-recovery:${randomUUID()}`;
      await Promise.all(ids.map((transactionId) => submit({ transactionId, correlationId })));
      logger.info({ transfers: ids.length }, 'settling transfers left pending');
      return ids.length;
    },
    async stop() {
      await Promise.all(inFlight);
    },
  };
}
