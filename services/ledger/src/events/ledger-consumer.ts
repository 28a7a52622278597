import { toMinorUnits } from '@payments/contracts';
import type { Consumer, EventBus } from '@payments/service-kit';
import type { ObjectClaim } from '../domain/provider-object.js';
import type { Accounts } from '../use-cases/accounts.js';
import type { AdminActions } from '../use-cases/admin-actions.js';
import type { PayoutAccounts } from '../use-cases/payout-accounts.js';
import type { ProviderPayments } from '../use-cases/provider-payments.js';
import type { Reversals } from '../use-cases/reversals.js';
import type { Settlement } from '../use-cases/settlement.js';

/** Deliveries in hand per consumer (a batch of settlements is up to 50 of them, use-cases/settlement.ts). */
const PREFETCH = 100;

export interface LedgerConsumerDeps {
  bus: EventBus;
  settlement: Pick<Settlement, 'confirmPayment' | 'settleRequestedTransfer'>;
  reversals: Pick<Reversals, 'adjust'>;
  accounts: Pick<Accounts, 'removeDeletedUser'>;
  adminActions: Pick<AdminActions, 'recordAnnounced'>;
  prefetch?: number;
  providerPayments: Pick<ProviderPayments, 'record'>;
  payoutAccounts: Pick<PayoutAccounts, 'follow'>;
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

/**
 * The ledger's queue: provider confirmations and adjustments, its own money requests, user deletions and the other
 * services' admin actions, each handed to its use case as plain input. The use cases make each event take effect
 * once (the inbox) and in the same database transaction as the events it causes (the outbox); a delivery is
 * acknowledged once its use case has committed (confirmations in groups, use-cases/settlement.ts).
 */
export function startLedgerConsumer({
  bus,
  settlement,
  reversals,
  accounts,
  adminActions,
  prefetch = PREFETCH,
  providerPayments,
  payoutAccounts,
}: LedgerConsumerDeps): Promise<Consumer> {
  return bus.consume(
    'ledger',
    {
      PaymentProcessed: async (event, { logger }) => {
        const { data } = event;
        const report = {
          eventId: event.id,
          correlationId: event.correlation_id,
          fromProvider: data.source === 'provider',
          claim: claimOf(data, data.movement ?? 'payment', data.payment_id),
          confirmation: {
            status: data.status,
            amount: data.amount,
            currency: data.currency,
            movement: data.movement,
            failureReason: data.failure_reason,
            reference: data.payment_id,
          },
        };
        await settlement.confirmPayment(report, logger);
      },

      PaymentAdjusted: async (event, { logger }) => {
        const { data } = event;
        const report = {
          eventId: event.id,
          correlationId: event.correlation_id,
          claim: claimOf(data, 'payment', data.payment_reference ?? data.transaction_id),
          adjustment: {
            kind: data.adjustment,
            amount: toMinorUnits(data.amount),
            currency: data.currency,
            reference: data.reference,
            ...(data.refund_id && { refundId: data.refund_id }),
            ...(data.failure_reason && { failureReason: data.failure_reason }),
          },
        };
        await reversals.adjust(report, logger);
      },

      // A connected account's readiness (Stripe's account.updated): the newest report of each account counts.
      PayoutAccountUpdated: async (event, { logger }) => {
        const { data } = event;
        await payoutAccounts.follow(
          {
            account: data.account_id,
            status: {
              payoutsEnabled: data.payouts_enabled,
              currentlyDue: data.currently_due,
              disabledReason: data.disabled_reason,
            },
            asOf: new Date(data.created * 1000),
            eventId: data.provider_event_id,
            livemode: data.livemode ?? false,
          },
          logger,
        );
      },

      // The ledger's own requests, consumed after the commit that accepted them (ADR 0102 says why they stay events).
      DepositRequested: (event) =>
        providerPayments.record(event.data.transaction_id, 'payment', event.data.payment_method ?? null),
      WithdrawalRequested: (event) => providerPayments.record(event.data.transaction_id, 'payout'),

      TransferRequested: (event, { logger }) =>
        settlement.settleRequestedTransfer(
          {
            eventId: event.id,
            transactionId: event.data.transaction_id,
            correlationId: event.correlation_id,
          },
          logger,
        ),

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
