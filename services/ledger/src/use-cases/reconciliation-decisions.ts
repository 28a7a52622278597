import type { Logger, OutboxRelay } from '@payments/service-kit';
import { compareRecord, type LedgerSide } from '../domain/reconciliation.js';
import {
  ProviderRefusal,
  providerNet,
  type PaymentProvider,
  type ProviderRecord,
} from '../provider/payment-provider.js';
import { refusalsOf } from './errors.js';
import type {
  CaseInHand,
  Decision,
  ReconciliationCaseRecord,
  ReconciliationError,
  ReconciliationStore,
} from './reconciliation.js';
import { adjustDeposit, type ReversalUnit } from './reversals.js';
import { confirmPayment, neverMade, settle, type FlowContext } from './settlement-requests.js';

const refuse = refusalsOf<ReconciliationError>();

/** Cases about money the books never took in, which a refund or reversal at the provider can settle. */
const GIVEN_BACK_KINDS: ReadonlySet<string> = new Set([
  'duplicate_capture',
  'duplicate_transfer',
  'foreign_object',
  'unknown_to_ledger',
]);

/**
 * Records an admin's decision on the case in hand, with the case's figures and what the decision did in the trail,
 * and answers the case as decided.
 */
async function decideCase(
  hand: CaseInHand,
  current: ReconciliationCaseRecord,
  decision: Decision,
  done: Record<string, unknown>,
): Promise<ReconciliationCaseRecord> {
  await hand.decide(
    { caseId: current.id, decision: decision.decision, reason: decision.reason, actor: decision.actor },
    {
      kind: current.kind,
      provider_reference: current.reference,
      transaction_id: current.transactionId,
      provider_amount: current.providerAmount.toString(),
      ledger_amount: current.ledgerAmount.toString(),
      ...done,
    },
  );
  return {
    ...current,
    status: 'resolved',
    decision: decision.decision,
    reason: decision.reason,
    resolvedBy: decision.actor,
    resolvedAt: new Date(),
  };
}

/**
 * An admin's decision on a case (ADR 0089): `book` applies what the provider's records say through the same flows as
 * its events (so an event arriving later, or a decision made twice, changes nothing more); `refund` or `reverse`
 * gives back at the provider money the books never took in; `nothing_owed` records that nothing is. Each lands in
 * the trail of admin actions with its reason; the same decision again answers the case as decided.
 */
export function createCaseDecisions({
  store,
  provider,
  outbox,
  logger,
}: {
  store: Pick<ReconciliationStore, 'findCase' | 'ledgerSides' | 'withCase'>;
  provider: PaymentProvider;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
}): (caseId: string, decision: Decision) => Promise<ReconciliationCaseRecord> {
  /**
   * Applies what the provider's record says to its transaction, through the flows its events take. A removed
   * user's deposit can only have been taken back since: its refunds and lost disputes are platform losses.
   */
  const applyRecord = async (
    unit: ReversalUnit,
    hand: CaseInHand,
    record: ProviderRecord,
    side: LedgerSide,
    context: FlowContext,
  ) => {
    const transactionId = side.transaction.id;
    const money = { amount: Number(record.amount), currency: record.currency };
    if (record.kind === 'payment') {
      if (record.captured > 0n && !side.removed) {
        const paid = {
          status: 'completed',
          movement: 'payment',
          reference: record.reference,
          ...money,
        } as const;
        await settle(unit, [
          confirmPayment(transactionId, { ...paid, amount: Number(record.captured) }, context),
        ]);
      }
      const adjust = (kind: 'refund' | 'dispute_lost' | 'dispute_won', amount: bigint, reference: string) =>
        adjustDeposit(
          unit,
          transactionId,
          { kind, amount: amount as typeof record.amount, currency: record.currency, reference },
          context,
        );
      if (record.refunded > 0n) await adjust('refund', record.refunded, context.correlationId);
      for (const dispute of record.disputes) {
        if (dispute.outcome !== 'open')
          await adjust(`dispute_${dispute.outcome}`, dispute.amount, dispute.id);
      }
      return;
    }
    if (record.status === 'open') {
      // No payout was made (refused) and the withdrawal ended: its transfer is taken back, as a failed payout's is.
      if (record.payout === null && providerNet(record) > 0n)
        await hand.reverseTransfer(transactionId, { payout: null, transfer: record.reference });
      return;
    }
    const ended =
      record.status === 'paid'
        ? ({ status: 'completed' } as const)
        : ({
            status: 'failed',
            failureReason: record.failureReason ?? 'the payout failed at the provider',
          } as const);
    const reference = record.payout ?? record.reference;
    await settle(unit, [
      confirmPayment(transactionId, { ...ended, movement: 'payout', reference, ...money }, context),
    ]);
    if (record.status === 'failed' && providerNet(record) > 0n)
      await hand.reverseTransfer(transactionId, { payout: record.payout, transfer: record.reference });
  };

  /**
   * Gives back at the provider money the books never took in: an extra capture refunded to its payer, an extra
   * transfer taken back from the connected account. Only for an object that is not the one the ledger asked for
   * (that one's money is the user's, given back through the ledger's own flows). The call is made before the
   * decision is recorded, under a key of the case's own, so two admins deciding at once give back once.
   */
  const giveBack = async (
    found: ReconciliationCaseRecord,
    decision: Decision & { decision: 'refund' | 'reverse' },
  ): Promise<ReconciliationCaseRecord> => {
    if (found.status === 'resolved' && found.decision === decision.decision) return found;
    if (found.status !== 'open')
      throw refuse('CONFLICT', `This case is ${found.status}: nothing is left to decide`);
    const kind = decision.decision === 'refund' ? 'payment' : 'payout';
    if (!GIVEN_BACK_KINDS.has(found.kind))
      throw refuse(
        'BUSINESS_RULE_VIOLATION',
        `A ${decision.decision} is only for money the books never took in, not for a ${found.kind} case`,
      );
    const record = await provider.recordOf(found.reference, found.transactionId);
    if (!record || record.kind !== kind)
      throw refuse(
        'BUSINESS_RULE_VIOLATION',
        `The provider holds no ${kind === 'payment' ? 'payment' : 'transfer'} ${found.reference} to ${decision.decision}`,
      );
    const side = found.transactionId
      ? (await store.ledgerSides([found.transactionId])).get(found.transactionId)
      : undefined;
    if (side?.asked?.reference === record.reference)
      throw refuse(
        'BUSINESS_RULE_VIOLATION',
        `${record.reference} is what the ledger asked the provider for; it is given back through the ledger`,
      );
    const key = `reconciliation:${found.id}:${decision.decision}`;
    let given: Record<string, unknown>;
    try {
      given =
        record.kind === 'payment'
          ? { refund: await provider.refundPayment(record.reference, key) }
          : (await provider.reverseTransfer(record.reference, key), { reversed: record.reference });
    } catch (error) {
      if (error instanceof ProviderRefusal)
        throw refuse('BUSINESS_RULE_VIOLATION', `The provider refused: ${error.reason}`);
      throw error;
    }
    return store.withCase(found.id, async (_unit, hand) => {
      const current = hand.case as ReconciliationCaseRecord;
      if (current.status === 'resolved') return current;
      return decideCase(hand, current, decision, given);
    });
  };

  const resolve = async (caseId: string, decision: Decision): Promise<ReconciliationCaseRecord> => {
    const found = await store.findCase(caseId);
    if (!found) throw refuse('RESOURCE_NOT_FOUND', 'Reconciliation case not found');
    if (decision.decision === 'refund' || decision.decision === 'reverse')
      return giveBack(found, decision as Decision & { decision: 'refund' | 'reverse' });
    // What the provider says now, read before the database transaction (which must not wait on the network).
    const record =
      decision.decision === 'book' && found.status === 'open'
        ? await provider.recordOf(found.reference, found.transactionId)
        : null;
    const decided = await store.withCase(caseId, async (unit, hand) => {
      const current = hand.case as ReconciliationCaseRecord;
      if (current.status === 'resolved') {
        if (current.decision === decision.decision) return current;
        throw refuse('CONFLICT', `This case was already decided: ${current.decision}`);
      }
      if (current.status === 'cleared')
        throw refuse('CONFLICT', 'The provider and the books agree again: nothing is left to decide');
      const booked: Record<string, unknown> = {};
      if (decision.decision === 'book') {
        if (!record) throw refuse('CONFLICT', "The provider's records no longer hold this object");
        const transactionId = current.transactionId;
        const before = transactionId ? (await hand.sides([transactionId])).get(transactionId) : undefined;
        if (!transactionId || !before || GIVEN_BACK_KINDS.has(current.kind))
          throw refuse(
            'BUSINESS_RULE_VIOLATION',
            'Nothing of the ledger to book this against: give it back (refund, reverse) or decide nothing_owed ' +
              'with a reason',
          );
        const context = { correlationId: `reconciliation:${caseId}`, logger };
        await applyRecord(unit, hand, record, before, context);
        const after = (await hand.sides([transactionId])).get(transactionId) as LedgerSide;
        const compared = compareRecord(record, after, new Date(Date.now() + 1), 0);
        if (compared.outcome === 'mismatch')
          throw refuse(
            'CONFLICT',
            `The provider's records do not explain this difference (${compared.mismatch.kind}); ` +
              'decide nothing_owed with a reason once it is understood',
          );
        booked.booked = after.reversals
          .filter((r) => !before.reversals.some((earlier) => earlier.id === r.id))
          .map((r) => r.id);
        booked.transaction_status = after.transaction.status;
      }
      if (
        decision.decision === 'nothing_owed' &&
        current.kind === 'request_expired' &&
        current.reference === current.transactionId
      ) {
        // Its making expired and the provider made nothing: the transaction fails, its hold released.
        const context = { correlationId: `reconciliation:${caseId}`, logger };
        const [ended] = await settle(unit, [neverMade(current.reference, context)]);
        if (ended) booked.transaction_status = ended.status;
      }
      return decideCase(hand, current, decision, booked);
    });
    outbox.wake();
    return decided;
  };

  return resolve;
}
