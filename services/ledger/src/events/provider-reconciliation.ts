import type { ReconciliationDecision } from '@payments/contracts';
import {
  AppError,
  notFound,
  startPoller,
  type Logger,
  type Metrics,
  type OutboxRelay,
} from '@payments/service-kit';
import type { CaseInHand, LedgerStore, LedgerUnit, ReconciliationCaseRecord } from '../data/ledger-store.js';
import {
  compareRecord,
  isFinal,
  MISMATCH_KINDS,
  type LedgerSide,
  type Mismatch,
} from '../domain/reconciliation.js';
import { isUuid } from '../domain/identifiers.js';
import {
  ProviderRefusal,
  providerNet,
  type PaymentProvider,
  type ProviderRecord,
} from '../provider/payment-provider.js';
import { confirmPayment, neverMade, settle, type FlowContext } from '../use-cases/settlement-requests.js';
import { adjustDeposit } from '../use-cases/reversals.js';

export interface ReconciliationOptions {
  store: LedgerStore;
  provider: PaymentProvider;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  metrics: Metrics;
  /** How often the job runs on its own; 0: only when an admin asks. */
  intervalMs: number;
  /** A change younger than this is left to the next run: its events may be on their way. */
  graceMs: number;
  /** How far back a run reads at least (a paid payout can still come back days later). */
  lookbackMs: number;
}

/** What one run read and found. */
export interface RunSummary {
  since: string;
  checked: number;
  agreed: number;
  unsettled: number;
  mismatches: number;
  /**
   * Records of transactions removed with their users that are not compared: withdrawals (their history left with
   * them), and deposits removed before the ledger kept them. A removed deposit kept is compared: what the
   * provider took back since must be booked as platform losses.
   */
  removed: number;
  opened: number;
  cleared: number;
  cursor: string;
}

export interface Decision {
  decision: ReconciliationDecision;
  reason: string;
  /** The admin deciding (their user id). */
  actor: string;
}

export interface ProviderReconciliation {
  /** Runs now; refused with 409 while a run is under way (in any ledger process). */
  run(): Promise<RunSummary>;
  /** An admin's decision on a case; the same decision again answers the case as decided. */
  resolve(caseId: string, decision: Decision): Promise<ReconciliationCaseRecord>;
  stop(): Promise<void>;
}

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

/** How long a run may hold the job before another process may take it over (a run cut short by a crash). */
const RUN_LEASE_MS = 10 * 60_000;
/** Records compared per round trip to the database. */
const BATCH = 100;

/**
 * Reconciliation with the provider's own records: pages through what the provider made since the last run's
 * cursor, compares each with the books (domain/reconciliation.ts), opens a case for each mismatch and clears the
 * cases that agree again. An admin decides each open case: `book` applies what the provider's records say through
 * the same flows as its events (so an event arriving later, or a decision made twice, changes nothing more), and
 * `nothing_owed` records that nothing is; both land in the trail of admin actions with their reason.
 */
export function startProviderReconciliation(options: ReconciliationOptions): ProviderReconciliation {
  const { store, provider, outbox, logger } = options;
  options.metrics.labelledGauge(
    'ledger_reconciliation_cases_open',
    "Open mismatches between the payment provider's records and the books, by kind (GET /admin/reconciliation)",
    'kind',
    MISMATCH_KINDS,
    () => store.reconciliation.openCaseCounts(),
  );

  const compareBatch = async (records: ProviderRecord[], now: Date, summary: RunSummary) => {
    const ids = records.flatMap((record) => (record.transactionId ? [record.transactionId] : []));
    const sides = await store.reconciliation.ledgerSides(ids.filter(isUuid));
    const missing = ids.filter((id) => isUuid(id) && !sides.has(id));
    const removed = await store.reconciliation.removedAmong(missing);
    const mismatches: Mismatch[] = [];
    const agreed: string[] = [];
    let oldestUnsettled: Date | null = null;
    for (const record of records) {
      const side = (record.transactionId && sides.get(record.transactionId)) || null;
      if (!side && record.transactionId && removed.has(record.transactionId)) {
        summary.checked += 1;
        summary.removed += 1;
        continue;
      }
      const compared = compareRecord(record, side, now, options.graceMs);
      summary.checked += 1;
      if (compared.outcome === 'mismatch') mismatches.push(compared.mismatch);
      else if (compared.outcome === 'agree') agreed.push(record.reference);
      else summary.unsettled += 1;
      // The cursor stays at the oldest record of the ledger's that may still change, so the next run reads it
      // again (one the ledger does not know, such as another application's payment left open, holds nothing).
      if (
        side &&
        (compared.outcome === 'unsettled' || !isFinal(record)) &&
        !(oldestUnsettled && oldestUnsettled <= record.created)
      )
        oldestUnsettled = record.created;
    }
    summary.agreed += agreed.length;
    summary.mismatches += mismatches.length;
    summary.opened += await store.reconciliation.recordMismatches(mismatches);
    summary.cleared += await store.reconciliation.clearAgreed(agreed);
    return oldestUnsettled;
  };

  const run = async (): Promise<RunSummary> => {
    const now = new Date();
    const claimed = await store.reconciliation.claimRun(RUN_LEASE_MS);
    if (!claimed) throw new AppError('CONFLICT', 'A reconciliation run is under way; try again when it ends');
    const floor = new Date(now.getTime() - options.lookbackMs);
    const since = claimed.cursor && claimed.cursor < floor ? claimed.cursor : floor;
    const summary: RunSummary = {
      since: since.toISOString(),
      checked: 0,
      agreed: 0,
      unsettled: 0,
      mismatches: 0,
      removed: 0,
      opened: 0,
      cleared: 0,
      cursor: since.toISOString(),
    };
    // The next run starts at the oldest record still unsettled, or the lookback, whichever is older.
    let cursor = floor;
    try {
      let batch: ProviderRecord[] = [];
      const flush = async () => {
        const oldest = await compareBatch(batch, now, summary);
        if (oldest && oldest < cursor) cursor = oldest;
        batch = [];
      };
      for await (const record of provider.recordsSince(since)) {
        batch.push(record);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
    } catch (error) {
      await store.reconciliation.finishRun(null, { ...summary, error: String(error) });
      throw error;
    }
    summary.cursor = cursor.toISOString();
    await store.reconciliation.finishRun(cursor, summary);
    logger.info(summary, 'reconciled the books with the payment provider');
    return summary;
  };

  /**
   * Applies what the provider's record says to its transaction, through the flows its events take. A removed
   * user's deposit can only have been taken back since: its refunds and lost disputes are platform losses.
   */
  const applyRecord = async (
    unit: LedgerUnit,
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
      throw new AppError('CONFLICT', `This case is ${found.status}: nothing is left to decide`);
    const kind = decision.decision === 'refund' ? 'payment' : 'payout';
    if (!GIVEN_BACK_KINDS.has(found.kind))
      throw new AppError(
        'BUSINESS_RULE_VIOLATION',
        `A ${decision.decision} is only for money the books never took in, not for a ${found.kind} case`,
      );
    const record = await provider.recordOf(found.reference, found.transactionId);
    if (!record || record.kind !== kind)
      throw new AppError(
        'BUSINESS_RULE_VIOLATION',
        `The provider holds no ${kind === 'payment' ? 'payment' : 'transfer'} ${found.reference} to ${decision.decision}`,
      );
    const side = found.transactionId
      ? (await store.reconciliation.ledgerSides([found.transactionId])).get(found.transactionId)
      : undefined;
    if (side?.asked?.reference === record.reference)
      throw new AppError(
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
        throw new AppError('BUSINESS_RULE_VIOLATION', `The provider refused: ${error.reason}`);
      throw error;
    }
    return store.reconciliation.withCase(found.id, async (_unit, hand) => {
      const current = hand.case as ReconciliationCaseRecord;
      if (current.status === 'resolved') return current;
      return decideCase(hand, current, decision, given);
    });
  };

  const resolve = async (caseId: string, decision: Decision): Promise<ReconciliationCaseRecord> => {
    const found = await store.reconciliation.findCase(caseId);
    if (!found) throw notFound('Reconciliation case');
    if (decision.decision === 'refund' || decision.decision === 'reverse')
      return giveBack(found, decision as Decision & { decision: 'refund' | 'reverse' });
    // What the provider says now, read before the database transaction (which must not wait on the network).
    const record =
      decision.decision === 'book' && found.status === 'open'
        ? await provider.recordOf(found.reference, found.transactionId)
        : null;
    const decided = await store.reconciliation.withCase(caseId, async (unit, hand) => {
      const current = hand.case as ReconciliationCaseRecord;
      if (current.status === 'resolved') {
        if (current.decision === decision.decision) return current;
        throw new AppError('CONFLICT', `This case was already decided: ${current.decision}`);
      }
      if (current.status === 'cleared')
        throw new AppError('CONFLICT', 'The provider and the books agree again: nothing is left to decide');
      const booked: Record<string, unknown> = {};
      if (decision.decision === 'book') {
        if (!record) throw new AppError('CONFLICT', "The provider's records no longer hold this object");
        const transactionId = current.transactionId;
        const before = transactionId ? (await hand.sides([transactionId])).get(transactionId) : undefined;
        if (!transactionId || !before || GIVEN_BACK_KINDS.has(current.kind))
          throw new AppError(
            'BUSINESS_RULE_VIOLATION',
            'Nothing of the ledger to book this against: give it back (refund, reverse) or decide nothing_owed ' +
              'with a reason',
          );
        const context = { correlationId: `reconciliation:${caseId}`, logger };
        await applyRecord(unit, hand, record, before, context);
        const after = (await hand.sides([transactionId])).get(transactionId) as LedgerSide;
        const compared = compareRecord(record, after, new Date(Date.now() + 1), 0);
        if (compared.outcome === 'mismatch')
          throw new AppError(
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

  const poller =
    options.intervalMs > 0
      ? startPoller({
          intervalMs: options.intervalMs,
          idleMaxMs: options.intervalMs,
          task: async () => {
            await run().catch((error: unknown) => {
              if (!(error instanceof AppError)) throw error;
            });
            return false;
          },
          onError: (error) => logger.warn({ err: error }, 'reconciliation with the payment provider failed'),
        })
      : null;

  return { run, resolve, stop: async () => poller?.stop() };
}
