import type { Consumer, EventBus, OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import { isUuid } from '../domain/identifiers.js';
import { settledEvent } from './ledger-events.js';
import { confirmPayment, settleTransfer } from './settlement-flows.js';

export interface LedgerConsumerDeps {
  bus: EventBus;
  store: LedgerStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  prefetch?: number;
  /** Called once a payment confirmation is committed and before it is acknowledged (test fault injection). */
  afterConfirmationCommit?: (transactionId: string) => void;
}

/**
 * The ledger's queue: provider confirmations, its own transfer requests and user deletions. Each event takes
 * effect once (the inbox) and in the same database transaction as the events it causes (the outbox).
 */
export function startLedgerConsumer({
  bus,
  store,
  outbox,
  prefetch,
  afterConfirmationCommit,
}: LedgerConsumerDeps): Promise<Consumer> {
  return bus.consume(
    'ledger',
    {
      PaymentProcessed: async (event, { logger }) => {
        const { data } = event;
        if (!isUuid(data.transaction_id)) {
          logger.warn(
            { transaction_id: data.transaction_id },
            'payment confirmation for a malformed transaction id; ignored',
          );
          return;
        }
        const context = { correlationId: event.correlation_id, logger };
        const confirmation = {
          status: data.status,
          amount: data.amount,
          currency: data.currency,
          movement: data.movement,
          failureReason: data.failure_reason,
        };
        const result = await store.processEventOnce(event.id, (unit) =>
          confirmPayment(unit, data.transaction_id, confirmation, context).then(() => undefined),
        );
        if (result === 'processed') afterConfirmationCommit?.(data.transaction_id);
        outbox.wake();
      },

      TransferRequested: async (event, { logger }) => {
        const context = { correlationId: event.correlation_id, logger };
        await store.processEventOnce(event.id, (unit) =>
          settleTransfer(unit, event.data.transaction_id, context).then(() => undefined),
        );
        outbox.wake();
      },

      UserDeleted: async (event, { logger }) => {
        await store.processEventOnce(event.id, async (unit) => {
          const removed = await unit.removeUser(event.data.user_id, 'The user was deleted');
          await unit.enqueue(
            removed.canceled.map((transaction) => settledEvent(transaction, event.correlation_id)),
          );
          if (removed.unclaimed.length > 0) {
            logger.warn(
              {
                user_id: event.data.user_id,
                unclaimed: removed.unclaimed.map((u) => ({ ...u, amount: u.amount.toString() })),
              },
              'a deleted user left money on accounts; moved to unclaimed funds',
            );
          }
          logger.info(
            { user_id: event.data.user_id, accounts: removed.accounts, transactions: removed.transactions },
            'removed a deleted user',
          );
        });
        outbox.wake();
      },
    },
    { prefetch },
  );
}
