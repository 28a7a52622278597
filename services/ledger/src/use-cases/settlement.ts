import { randomUUID } from 'node:crypto';
import { createBatcher, type Logger, type OutboxRelay } from '@payments/service-kit';
import type { Confirmation } from '../domain/confirmation.js';
import { isUuid } from '../domain/identifiers.js';
import type { ObjectClaim } from '../domain/provider-object.js';
import type { ProviderPayments } from './provider-payments.js';
import {
  confirmPayment,
  settle,
  settleTransfer,
  type SettlementRequest,
  type SettlementUnit,
} from './settlement-requests.js';
import type { OncePerEvent, UnitOfWork } from './unit-of-work.js';

/** How many confirmations one database transaction settles at most. */
const CONFIRMATION_BATCH_SIZE = 50;
/** How many transfers one database transaction settles at most. */
const TRANSFER_BATCH_SIZE = 100;
/**
 * A transfer still pending this long after its acceptance was not settled by the process that accepted it (it
 * crashed, or its settlement failed): the recovery sweep settles it, unless its hold expired first.
 */
const RECOVERY_AGE_MS = 10_000;

/** A provider's (or SPEC's payment webhooks') word on a deposit or payout: PaymentProcessed. */
export interface PaymentReport {
  eventId: string;
  correlationId: string;
  /** From the provider's own webhook; SPEC's payment webhooks instead name the transaction itself. */
  fromProvider: boolean;
  /** The object the report is about, and the transaction it names. */
  claim: ObjectClaim;
  confirmation: Confirmation;
}

/**
 * Ends pending transactions: deposits and withdrawals as their provider reports, transfers as the ledger settles
 * them itself. Whatever arrives together is settled together (group commit, ADRs 0067-0069): one database
 * transaction and a fixed number of statements for a whole batch.
 */
export interface Settlement {
  /**
   * Completes, fails or cancels the deposit or payout the report's object counts for (provider-payments.ts), once
   * per event, never for another amount; a failed attempt only records its reason. Resolves once committed.
   */
  confirmPayment(report: PaymentReport, log: Logger): Promise<void>;
  /** Settles a transfer announced by TransferRequested (declared and bound, though nothing publishes it). */
  settleRequestedTransfer(
    event: { eventId: string; transactionId: string; correlationId: string },
    log: Logger,
  ): Promise<void>;
  /**
   * Settles an accepted (committed) transfer soon, with the others submitted meanwhile; never throws. One left
   * pending (a failed batch, a crash) is settled by the recovery sweep instead.
   */
  submitTransfer(transactionId: string, correlationId: string): void;
  /**
   * One recovery sweep now (one also runs at start and every `recoveryIntervalMs`): settles the transfers pending
   * for longer than RECOVERY_AGE_MS whose hold has not expired (those the hold expiry cancels). Resolves with how
   * many it found.
   */
  recoverTransfers(): Promise<number>;
  /** Stops the sweeps and waits for the transfer settlements under way. */
  stop(): Promise<void>;
}

export interface SettlementStore extends UnitOfWork<SettlementUnit>, OncePerEvent<SettlementUnit> {
  /** Pending transfers accepted in [notBefore, acceptedBefore), oldest first. */
  pendingTransfers(acceptedBefore: Date, notBefore: Date, limit: number): Promise<string[]>;
}

interface Settling {
  eventId: string;
  request: SettlementRequest;
  afterCommit?: () => void;
}

interface Submitted {
  transactionId: string;
  correlationId: string;
}

export function createSettlement({
  store,
  providerPayments,
  outbox,
  logger,
  holdExpiryMs,
  recoveryIntervalMs,
  afterConfirmationCommit,
  now = Date.now,
}: {
  store: SettlementStore;
  providerPayments: Pick<ProviderPayments, 'transactionFor'>;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  /** How often the recovery sweep looks for transfers left pending. */
  recoveryIntervalMs: number;
  /** Called once a payment confirmation is committed and before it is acknowledged (test fault injection). */
  afterConfirmationCommit?: (transactionId: string) => void;
  now?: () => number;
}): Settlement {
  /**
   * Events that end transactions, settled together and each once (the inbox); a batch that fails is retried one
   * event at a time, so a poison event fails alone.
   */
  const settlements = createBatcher<Settling, void>(
    async (batch) => {
      const due: Settling[] = [];
      await store.processEventsOnce(
        batch.map((item) => item.eventId),
        async (unit, fresh) => {
          const claimed = new Set<string>();
          for (const item of batch) {
            if (!fresh.has(item.eventId) || claimed.has(item.eventId)) continue;
            claimed.add(item.eventId);
            due.push(item);
          }
          await settle(
            unit,
            due.map((item) => item.request),
          );
        },
      );
      for (const item of due) item.afterCommit?.();
      outbox.wake();
      return batch.map(() => undefined);
    },
    { maxSize: CONFIRMATION_BATCH_SIZE },
  );

  const transfers = createTransferSettler({ store, outbox, logger, holdExpiryMs, recoveryIntervalMs, now });

  return {
    async confirmPayment({ eventId, correlationId, fromProvider, claim, confirmation }, log) {
      if (!fromProvider && !isUuid(claim.objectId)) {
        // SPEC's payment webhooks name the transaction itself; anything else they name is not theirs to confirm.
        log.warn({ payment_id: claim.objectId }, 'a payment webhook names no transaction; ignored');
        return;
      }
      const moved = confirmation.status === 'completed' ? BigInt(confirmation.amount ?? 0) : 0n;
      const money = { currency: confirmation.currency, amount: moved, adjustment: false };
      const transactionId = await providerPayments.transactionFor({ eventId, claim, money }, log);
      if (!transactionId) return;
      await settlements.submit({
        eventId,
        request: confirmPayment(transactionId, confirmation, { correlationId, logger: log }),
        afterCommit: () => afterConfirmationCommit?.(transactionId),
      });
    },

    async settleRequestedTransfer({ eventId, transactionId, correlationId }, log) {
      await settlements.submit({
        eventId,
        request: settleTransfer(transactionId, { correlationId, logger: log }),
      });
    },

    submitTransfer: transfers.submit,
    recoverTransfers: transfers.recover,
    stop: transfers.stop,
  };
}

/** The transfers of one ledger process, and the sweep that settles those a crash or a failed batch left pending. */
export interface TransferSettler {
  submit: Settlement['submitTransfer'];
  recover: Settlement['recoverTransfers'];
  stop: Settlement['stop'];
}

export interface TransferSettlerOptions {
  store: Pick<SettlementStore, 'inTransaction' | 'pendingTransfers'>;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  /** How often the recovery sweep looks for transfers left pending. */
  recoveryIntervalMs: number;
  now?: () => number;
}

/**
 * The ledger settles the transfers it accepts itself, in this process and without the broker: transfers accepted
 * meanwhile are settled together (group commit), one database transaction and a fixed number of statements for up
 * to TRANSFER_BATCH_SIZE of them. Settling locks the transaction and ends it only while pending, so a transfer
 * settles once whoever gets to it (this process, another, or the recovery sweep).
 */
export function createTransferSettler({
  store,
  outbox,
  logger,
  holdExpiryMs,
  recoveryIntervalMs,
  now = Date.now,
}: TransferSettlerOptions): TransferSettler {
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
    { maxSize: TRANSFER_BATCH_SIZE },
  );
  const inFlight = new Set<Promise<unknown>>();
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
        TRANSFER_BATCH_SIZE * 10,
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
