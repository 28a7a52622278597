import { toMinorUnits } from '@payments/contracts';
import { createBatcher, type Consumer, type EventBus, type OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import type { Accounts } from '../use-cases/accounts.js';
import type { AdminActions } from '../use-cases/admin-actions.js';
import type { ProviderPayments } from '../use-cases/provider-payments.js';
import { isUuid } from '../domain/identifiers.js';
import type { ObjectClaim } from '../domain/provider-object.js';
import {
  confirmPayment,
  settle,
  settleTransfer,
  type SettlementRequest,
} from '../use-cases/settlement-requests.js';
import { adjustDeposit } from './settlement-flows.js';

/** Deliveries in hand per consumer, and how many of them one database transaction settles at most. */
const PREFETCH = 100;
const BATCH_SIZE = 50;

export interface LedgerConsumerDeps {
  bus: EventBus;
  store: LedgerStore;
  accounts: Pick<Accounts, 'removeDeletedUser'>;
  adminActions: Pick<AdminActions, 'recordAnnounced'>;
  outbox: Pick<OutboxRelay, 'wake'>;
  prefetch?: number;
  /** Called once a payment confirmation is committed and before it is acknowledged (test fault injection). */
  afterConfirmationCommit?: (transactionId: string) => void;
  providerPayments: Pick<ProviderPayments, 'record' | 'transactionFor'>;
}

/** What a provider event's object claims, from the event: `objectId` is the object whose recorded request counts. */
const claimOf = (
  data: { transaction_id: string; livemode?: boolean; account?: string },
  movement: ObjectClaim['movement'],
  objectId: string,
): ObjectClaim => ({
  movement,
  objectId,
  hint: data.transaction_id,
  livemode: data.livemode ?? false,
  account: data.account ?? null,
});

interface Settling {
  eventId: string;
  request: SettlementRequest;
  afterCommit?: () => void;
}

/**
 * The ledger's queue: provider confirmations and adjustments, its own money requests, user deletions and the other
 * services' admin actions. Each event takes effect once (the inbox) and in the same database transaction as the
 * events it causes (the outbox).
 *
 * Confirmations and transfer settlements that arrive together are settled together: one database transaction
 * and a fixed number of statements for up to BATCH_SIZE of them (group commit), acknowledged one by one after
 * it commits. A batch that fails is retried one event at a time, so a poison event fails alone.
 */
export function startLedgerConsumer({
  bus,
  store,
  accounts,
  adminActions,
  outbox,
  prefetch = PREFETCH,
  afterConfirmationCommit,
  providerPayments,
}: LedgerConsumerDeps): Promise<Consumer> {
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
    { maxSize: BATCH_SIZE },
  );

  return bus.consume(
    'ledger',
    {
      PaymentProcessed: async (event, { logger }) => {
        const { data } = event;
        if (data.source !== 'provider' && !isUuid(data.payment_id)) {
          // SPEC's payment webhooks name the transaction itself; anything else they name is not theirs to confirm.
          logger.warn({ payment_id: data.payment_id }, 'a payment webhook names no transaction; ignored');
          return;
        }
        const claim = claimOf(data, data.movement ?? 'payment', data.payment_id);
        const moved = data.status === 'completed' ? BigInt(data.amount ?? 0) : 0n;
        const money = { currency: data.currency, amount: moved, adjustment: false };
        const transactionId = await providerPayments.transactionFor(
          { eventId: event.id, claim, money },
          logger,
        );
        if (!transactionId) return;
        const context = { correlationId: event.correlation_id, logger };
        const confirmation = {
          status: data.status,
          amount: data.amount,
          currency: data.currency,
          movement: data.movement,
          failureReason: data.failure_reason,
          reference: data.payment_id,
        };
        await settlements.submit({
          eventId: event.id,
          request: confirmPayment(transactionId, confirmation, context),
          afterCommit: () => afterConfirmationCommit?.(transactionId),
        });
      },

      // Refunds and disputes are rare: each in a database transaction of its own, under the deposit's row lock.
      PaymentAdjusted: async (event, { logger }) => {
        const { data } = event;
        const claim = claimOf(data, 'payment', data.payment_reference ?? data.transaction_id);
        const taken = data.adjustment === 'dispute_won' ? 0n : BigInt(data.amount);
        const money = { currency: data.currency, amount: taken, adjustment: true };
        const transactionId = await providerPayments.transactionFor(
          { eventId: event.id, claim, money },
          logger,
        );
        if (!transactionId) return;
        const context = { correlationId: event.correlation_id, logger };
        const adjustment = {
          kind: data.adjustment,
          amount: toMinorUnits(data.amount),
          currency: data.currency,
          reference: data.reference,
        };
        await store.processEventsOnce([event.id], async (unit) => {
          await adjustDeposit(unit, transactionId, adjustment, context);
        });
        outbox.wake();
      },

      // The ledger's own requests, consumed after the commit that accepted them (ADR 0102 says why they stay events).
      DepositRequested: (event) => providerPayments.record(event.data.transaction_id, 'payment'),
      WithdrawalRequested: (event) => providerPayments.record(event.data.transaction_id, 'payout'),

      TransferRequested: async (event, { logger }) => {
        const context = { correlationId: event.correlation_id, logger };
        await settlements.submit({
          eventId: event.id,
          request: settleTransfer(event.data.transaction_id, context),
        });
      },

      // Identity deletes a user only after the ledger removed them (POST /internal/users/:id/removal).
      UserDeleted: (event, { logger }) =>
        accounts.removeDeletedUser({ eventId: event.id, userId: event.data.user_id }, logger),

      // Another service's admin acted on a resource not theirs: kept in the trail, once, as of when it happened.
      AdminActionTaken: async (event) => {
        await adminActions.recordAnnounced({
          eventId: event.id,
          occurredAt: new Date(event.occurred_at),
          action: event.data,
        });
      },
    },
    { prefetch },
  );
}
