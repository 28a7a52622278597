import { isUuid } from './identifiers.js';

/** What a provider event says about the object it carries, and the transaction that object names. */
export interface ObjectClaim {
  /** The kind of money movement: a payment (its refunds and disputes too) or a payout. */
  movement: 'payment' | 'payout';
  /**
   * The provider's object (Stripe: the PaymentIntent, the payout; for a refund or dispute, the PaymentIntent it
   * belongs to). A transaction id here is SPEC's stand-in, naming the transaction itself.
   */
  objectId: string;
  /** The transaction its metadata names: a hint, which must agree with the object. */
  hint: string | null;
  livemode: boolean;
  /** The connected account the object lives on; null for the platform's own. */
  account: string | null;
}

/** What the ledger asked the provider for one transaction (provider_payments, or a removed user's deposit). */
export interface RecordedRequest {
  transactionId: string;
  kind: 'payment' | 'payout';
  state: string;
  /** The provider's object, once it made one (Stripe: `pi_…`, `po_…`). */
  reference: string | null;
  /** Payouts: the connected account paid out to. */
  destination: string | null;
}

/** What the ledger knows of an object and of the transaction it names. */
export interface KnownObject {
  /** The request whose recorded reference is the object. */
  recorded: RecordedRequest | null;
  /** The transaction the hint names, if it exists, with what was asked of the provider for it. */
  named: { transactionId: string; request: RecordedRequest | null } | null;
}

export interface MatchPolicy {
  /** SPEC's stand-ins (an object whose id is the transaction's own) may confirm. */
  standIn: boolean;
  /** The mode the ledger's provider key works in. */
  livemode: boolean;
}

export type ObjectMatch =
  | { outcome: 'matched'; transactionId: string }
  /** The provider's answer naming the object may not be recorded yet: look again later. */
  | { outcome: 'too_early'; transactionId: string }
  /**
   * Not an object the ledger asked for (foreign_object: it names one of the ledger's transactions; unknown_to_ledger:
   * none): it moves no money, and an operator looks at it.
   */
  | {
      outcome: 'unmatched';
      kind: 'foreign_object' | 'unknown_to_ledger';
      transactionId: string | null;
      reason: string;
    };

/**
 * Which transaction a provider object may move money for: the one whose recorded request made it, in the mode and
 * on the connected account the ledger asked for, never the one its metadata names alone (anyone can create an
 * object at the provider with our id in its metadata). SPEC's stand-in names the transaction as the object itself.
 */
export function matchProviderObject(
  claim: ObjectClaim,
  known: KnownObject,
  policy: MatchPolicy,
): ObjectMatch {
  const unmatched = (
    kind: 'foreign_object' | 'unknown_to_ledger',
    transactionId: string | null,
    reason: string,
  ): ObjectMatch => ({ outcome: 'unmatched', kind, transactionId, reason });
  const hint = claim.hint !== null && claim.hint !== claim.objectId ? claim.hint : null;

  if (isUuid(claim.objectId)) {
    const transactionId = claim.objectId.toLowerCase();
    if (!policy.standIn)
      return unmatched('foreign_object', transactionId, 'stand-in confirmations are not accepted here');
    if (hint && hint.toLowerCase() !== transactionId)
      return unmatched('foreign_object', transactionId, `its metadata names another transaction (${hint})`);
    return { outcome: 'matched', transactionId };
  }

  const { recorded, named } = known;
  if (recorded) {
    const problem = disagreement(claim, recorded, hint, policy);
    return problem
      ? unmatched('foreign_object', recorded.transactionId, problem)
      : { outcome: 'matched', transactionId: recorded.transactionId };
  }
  if (!named) return unmatched('unknown_to_ledger', null, 'it names no transaction of the ledger');
  const request = named.request;
  if (request?.state === 'requested' && request.reference === null && request.kind === claim.movement)
    return { outcome: 'too_early', transactionId: named.transactionId };
  return unmatched(
    'foreign_object',
    named.transactionId,
    request?.reference
      ? `the ledger asked the provider for ${request.reference}, not for ${claim.objectId}`
      : 'the ledger never asked the provider for it',
  );
}

/** Why an object recorded for a transaction still may not move its money, or null when nothing disagrees. */
function disagreement(
  claim: ObjectClaim,
  recorded: RecordedRequest,
  hint: string | null,
  policy: MatchPolicy,
): string | null {
  if (recorded.kind !== claim.movement)
    return `it is a ${claim.movement} event about the ${recorded.kind} of ${recorded.transactionId}`;
  if (hint && hint.toLowerCase() !== recorded.transactionId)
    return `its metadata names ${hint}, and the ledger made it for ${recorded.transactionId}`;
  if (claim.livemode !== policy.livemode)
    return `it happened in ${claim.livemode ? 'live' : 'test'} mode, and the ledger works in the other`;
  const expectedAccount = recorded.kind === 'payout' ? recorded.destination : null;
  if (claim.account !== expectedAccount)
    return `it lives on ${claim.account ?? "the platform's account"}, not on ${expectedAccount ?? "the platform's account"}`;
  return null;
}
