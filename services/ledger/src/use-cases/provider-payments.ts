import type { Logger, Metrics, OutboxRelay } from '@payments/service-kit';
import { isUuid } from '../domain/identifiers.js';
import {
  matchProviderObject,
  type KnownObject,
  type MatchPolicy,
  type ObjectClaim,
} from '../domain/provider-object.js';
import type { Mismatch } from '../domain/reconciliation.js';
import type { PaymentProvider } from '../provider/payment-provider.js';
import {
  startProviderRequests,
  type ProviderPayment,
  type ProviderRequestStore,
} from './provider-requests.js';
import type { OncePerEvent } from './unit-of-work.js';

/** What a provider object moved, as its event says: a payment or payout (an amount in), or an adjustment (out). */
export interface ObjectMoney {
  currency?: string;
  amount: bigint;
  adjustment: boolean;
}

/**
 * The payment provider's side of deposits and withdrawals: what the ledger asks it for, and which of the objects
 * it reports count for which transaction (ADR 0101).
 */
export interface ProviderPayments {
  /**
   * A deposit's or withdrawal's request (DepositRequested, WithdrawalRequested, consumed after the commit that
   * accepted it): recorded for the provider's calls (provider-requests.ts), once. Without a provider, nothing is
   * asked: confirmations come from outside. A deposit that names a payment method is paid with it as its payment
   * is made.
   */
  record(transactionId: string, kind: ProviderPayment['kind'], paymentMethod?: string | null): Promise<void>;
  /**
   * The transaction a provider object may move money for (domain/provider-object.ts). An object the ledger did not
   * ask for moves none: it is recorded as a reconciliation case, once per event, and the answer is null. One whose
   * request the ledger may not have recorded yet is refused with ProviderObjectTooEarlyError, to be looked at
   * again.
   */
  transactionFor(
    event: { eventId: string; claim: ObjectClaim; money: ObjectMoney },
    log: Pick<Logger, 'warn'>,
  ): Promise<string | null>;
  stop(): Promise<void>;
}

/** Thrown for a provider object whose request the ledger may not have recorded yet: the broker redelivers it later. */
export class ProviderObjectTooEarlyError extends Error {
  override name = 'ProviderObjectTooEarlyError';
}

export interface ProviderObjectUnit {
  /**
   * A provider object the ledger never asked for, as a reconciliation case: opened unless its reference has an open
   * one already, or (`unlessKnown`) any case at all. True when a case opened.
   */
  recordUnmatchedObject(mismatch: Mismatch, unlessKnown: boolean): Promise<boolean>;
}

export interface ProviderObjectStore extends OncePerEvent<ProviderObjectUnit> {
  /** What the ledger knows of a provider object, and of the transaction its metadata names (`hint`). */
  knownObject(objectId: string, hint: string | null): Promise<KnownObject>;
}

export function createProviderPayments({
  requests,
  objects,
  provider,
  policy,
  outbox,
  logger,
  metrics,
}: {
  requests: ProviderRequestStore;
  objects: ProviderObjectStore;
  /** None: nothing is asked of a provider. */
  provider: PaymentProvider | null;
  /** Which provider objects may move money: SPEC's stand-ins or not, and the provider's mode. */
  policy: MatchPolicy;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  metrics: Metrics;
}): ProviderPayments {
  const asking = provider && startProviderRequests({ store: requests, provider, outbox, logger, metrics });

  return {
    record: async (transactionId, kind, paymentMethod) => asking?.record(transactionId, kind, paymentMethod),

    async transactionFor({ eventId, claim, money }, log) {
      const known = isUuid(claim.objectId)
        ? { recorded: null, named: null }
        : await objects.knownObject(claim.objectId, claim.hint);
      const match = matchProviderObject(claim, known, policy);
      if (match.outcome === 'matched') return match.transactionId;
      const about = { provider_object: claim.objectId, transaction_id: match.transactionId };
      if (match.outcome === 'too_early') {
        throw new ProviderObjectTooEarlyError(
          `${claim.objectId} names ${match.transactionId}, whose request to the provider is not recorded yet`,
        );
      }
      await objects.processEventsOnce([eventId], async (unit) => {
        const opened = await unit.recordUnmatchedObject(
          {
            kind: match.kind,
            reference: claim.objectId,
            transactionId: match.transactionId,
            currency: money.currency ?? 'XXX',
            providerAmount: money.adjustment ? -money.amount : money.amount,
            ledgerAmount: 0n,
          },
          money.adjustment,
        );
        log.warn(
          { ...about, reason: match.reason, case_opened: opened },
          'a provider object the ledger did not ask for moves no money; left for reconciliation',
        );
      });
      return null;
    },

    stop: async () => asking?.stop(),
  };
}
