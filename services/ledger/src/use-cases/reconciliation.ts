import type { ReconciliationDecision } from '@payments/contracts';
import {
  AppError,
  startPoller,
  type Logger,
  type Metrics,
  type OutboxRelay,
  type PageCursor,
} from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import { isUuid } from '../domain/identifiers.js';
import {
  compareRecord,
  isFinal,
  MISMATCH_KINDS,
  type LedgerSide,
  type Mismatch,
  type MismatchKind,
} from '../domain/reconciliation.js';
import type { Transaction } from '../domain/transaction.js';
import type { PaymentProvider, ProviderRecord } from '../provider/payment-provider.js';
import { refusalsOf } from './errors.js';
import { createCaseDecisions } from './reconciliation-decisions.js';
import type { ReversalUnit } from './reversals.js';

/** What reconciliation may refuse with. */
export type ReconciliationError = 'RESOURCE_NOT_FOUND' | 'CONFLICT' | 'BUSINESS_RULE_VIOLATION';

/** A mismatch found between the provider's records and the books, and what became of it. */
export interface ReconciliationCaseRecord extends Mismatch {
  id: string;
  /** open: waiting for an admin; cleared: the two agree again (a late event); resolved: an admin decided. */
  status: 'open' | 'cleared' | 'resolved';
  decision: ReconciliationDecision | null;
  reason: string | null;
  resolvedBy: string | null;
  foundAt: Date;
  lastSeenAt: Date;
  resolvedAt: Date | null;
}

/** A withdrawal the provider may have received that outlived its hold expiry, and since when it waits. */
export interface UnconfirmedWithdrawal {
  transaction: Transaction;
  flaggedAt: Date;
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

/** What waits for an operator, as one list: unconfirmed withdrawals first, then the open cases. */
export interface WaitingPage {
  withdrawals: UnconfirmedWithdrawal[];
  cases: ReconciliationCaseRecord[];
  /** Of both together. */
  total: number;
  /** Whether items follow the page in the direction it was read (by cursor); unless given, by offset and total. */
  hasMore?: boolean;
}

/** Reconciliation with the provider's own records, for what only a configured provider can answer. */
export interface ProviderReconciliation {
  /** Runs now; refused with 409 while a run is under way (in any ledger process). */
  run(): Promise<RunSummary>;
  /** An admin's decision on a case; the same decision again answers the case as decided. */
  resolve(caseId: string, decision: Decision): Promise<ReconciliationCaseRecord>;
}

/**
 * What waits for an operator: withdrawals the provider may have received that got no confirmation in time, and
 * the mismatches between the provider's records and the books (ADR 0089), each decided by an admin.
 */
export interface Reconciliation {
  /** A page of what waits, paged across both lists, by offset or by cursor (an id of either kind). */
  waiting(page: PageRequest): Promise<WaitingPage>;
  /** All of it (up to REPORT_ROWS of each), for the CSV report. */
  report(): Promise<{ withdrawals: UnconfirmedWithdrawal[]; cases: ReconciliationCaseRecord[] }>;
  findCase(caseId: string): Promise<ReconciliationCaseRecord>;
  /** Running and deciding need the provider's records: refused (422) where no provider is configured. */
  withProvider(): ProviderReconciliation;
  stop(): Promise<void>;
}

/** A reconciliation case locked for a decision, and what deciding it may do in the same database transaction. */
export interface CaseInHand {
  case: ReconciliationCaseRecord | null;
  sides(transactionIds: string[]): Promise<Map<string, LedgerSide>>;
  decide(
    decided: { caseId: string; decision: ReconciliationDecision; reason: string; actor: string },
    detail: Record<string, unknown>,
  ): Promise<void>;
  /** Asks again for a payout's transfer to be taken back, with what the provider's records name. */
  reverseTransfer(transactionId: string, found: { payout: string | null; transfer: string }): Promise<void>;
}

export interface ReconciliationStore {
  listAwaitingReconciliation(page: PageRequest): Promise<Page<UnconfirmedWithdrawal>>;
  /**
   * A page of the whole queue (withdrawals, then open cases) past a cursor: the id of a withdrawal once flagged
   * or of a case, waiting still or not; else a 400.
   */
  listWaitingByCursor(request: { limit: number; cursor: PageCursor }): Promise<{
    withdrawals: UnconfirmedWithdrawal[];
    cases: ReconciliationCaseRecord[];
    hasMore: boolean;
  }>;
  countAwaitingReconciliation(): Promise<number>;
  /** The transactions the provider's records name, with their reversals and any undo still to be made. */
  ledgerSides(transactionIds: string[]): Promise<Map<string, LedgerSide>>;
  /** Which of these transactions were removed with their users. */
  removedAmong(transactionIds: string[]): Promise<Set<string>>;
  /** Claims the job for `leaseMs` (one run at a time); null while another run holds it. */
  claimRun(leaseMs: number): Promise<{ cursor: Date | null } | null>;
  finishRun(cursor: Date | null, summary: object): Promise<void>;
  /** Opens a case for each new mismatch (one seen before is the same case); answers how many are new. */
  recordMismatches(mismatches: Mismatch[]): Promise<number>;
  /** Clears the open cases of these references: the provider and the books agree about them now. */
  clearAgreed(references: string[]): Promise<number>;
  openCaseCounts(): Promise<Map<MismatchKind, number>>;
  listCases(
    status: ReconciliationCaseRecord['status'] | null,
    page: PageRequest,
  ): Promise<Page<ReconciliationCaseRecord>>;
  findCase(id: string): Promise<ReconciliationCaseRecord | null>;
  /**
   * Runs `work` in one database transaction with the case locked (null: no such case), so two decisions on one
   * case take turns; the books are changed through `unit`, under the same locks as the money paths.
   */
  withCase<T>(caseId: string, work: (unit: ReversalUnit, hand: CaseInHand) => Promise<T>): Promise<T>;
}

export interface ReconciliationOptions {
  store: ReconciliationStore;
  /** None: nothing to reconcile with. */
  provider: PaymentProvider | null;
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

/** How long a run may hold the job before another process may take it over (a run cut short by a crash). */
const RUN_LEASE_MS = 10 * 60_000;
/** Records compared per round trip to the database. */
const BATCH = 100;
/** The most rows the CSV report holds of each part (it is not paged). */
const REPORT_ROWS = 10_000;

const refuse = refusalsOf<ReconciliationError>();

export function createReconciliation(options: ReconciliationOptions): Reconciliation {
  const { store, provider } = options;
  options.metrics.gauge(
    'ledger_withdrawals_awaiting_reconciliation',
    'Pending withdrawals handed to the provider that outlived their hold expiry',
    () => store.countAwaitingReconciliation(),
  );
  const withRecords = provider && startRecordsReconciliation({ ...options, provider });

  return {
    async waiting({ limit, offset, cursor }) {
      if (cursor) {
        const [page, withdrawalCount, caseCounts] = await Promise.all([
          store.listWaitingByCursor({ limit, cursor }),
          store.countAwaitingReconciliation(),
          store.openCaseCounts(),
        ]);
        const caseCount = [...caseCounts.values()].reduce((sum, count) => sum + count, 0);
        return { ...page, total: withdrawalCount + caseCount };
      }
      const withdrawals = await store.listAwaitingReconciliation({ limit, offset });
      const room = limit - withdrawals.data.length;
      const cases = await store.listCases('open', {
        limit: Math.max(room, 1),
        offset: Math.max(0, offset - withdrawals.total),
      });
      return {
        withdrawals: withdrawals.data,
        cases: room > 0 ? cases.data.slice(0, room) : [],
        total: withdrawals.total + cases.total,
      };
    },

    async report() {
      const [withdrawals, cases] = await Promise.all([
        store.listAwaitingReconciliation({ limit: REPORT_ROWS, offset: 0 }),
        store.listCases('open', { limit: REPORT_ROWS, offset: 0 }),
      ]);
      return { withdrawals: withdrawals.data, cases: cases.data };
    },

    async findCase(caseId) {
      const found = await store.findCase(caseId);
      if (!found) throw refuse('RESOURCE_NOT_FOUND', 'Reconciliation case not found');
      return found;
    },

    withProvider() {
      if (!withRecords)
        throw refuse(
          'BUSINESS_RULE_VIOLATION',
          'No payment provider is configured: there are no provider records to reconcile with',
        );
      return withRecords;
    },

    stop: async () => withRecords?.stop(),
  };
}

/**
 * Reconciliation with the provider's own records: pages through what the provider made since the last run's
 * cursor, compares each with the books (domain/reconciliation.ts), opens a case for each mismatch and clears the
 * cases that agree again; an admin decides each open case (reconciliation-decisions.ts). One ledger process at a
 * time runs it, every `intervalMs` and when an admin asks.
 */
function startRecordsReconciliation(
  options: ReconciliationOptions & { provider: PaymentProvider },
): ProviderReconciliation & { stop(): Promise<void> } {
  const { store, provider, outbox, logger } = options;
  options.metrics.labelledGauge(
    'ledger_reconciliation_cases_open',
    "Open mismatches between the payment provider's records and the books, by kind (GET /admin/reconciliation)",
    'kind',
    MISMATCH_KINDS,
    () => store.openCaseCounts(),
  );

  const compareBatch = async (records: ProviderRecord[], now: Date, summary: RunSummary) => {
    const ids = records.flatMap((record) => (record.transactionId ? [record.transactionId] : []));
    const sides = await store.ledgerSides(ids.filter(isUuid));
    const missing = ids.filter((id) => isUuid(id) && !sides.has(id));
    const removed = await store.removedAmong(missing);
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
    summary.opened += await store.recordMismatches(mismatches);
    summary.cleared += await store.clearAgreed(agreed);
    return oldestUnsettled;
  };

  const run = async (): Promise<RunSummary> => {
    const now = new Date();
    const claimed = await store.claimRun(RUN_LEASE_MS);
    if (!claimed) throw refuse('CONFLICT', 'A reconciliation run is under way; try again when it ends');
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
      await store.finishRun(null, { ...summary, error: String(error) });
      throw error;
    }
    summary.cursor = cursor.toISOString();
    await store.finishRun(cursor, summary);
    logger.info(summary, 'reconciled the books with the payment provider');
    return summary;
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

  return {
    run,
    resolve: createCaseDecisions({ store, provider, outbox, logger }),
    stop: async () => poller?.stop(),
  };
}
