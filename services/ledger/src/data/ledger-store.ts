import type { ReconciliationDecision } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { LedgerSide, Mismatch, MismatchKind } from '../domain/reconciliation.js';
import * as queries from './ledger-queries.js';
import * as reconciliation from './reconciliation.js';
import { createLedgerUnit, type LedgerUnit } from './ledger-unit.js';
import { retryingConflicts, unitOfWork } from './unit-of-work.js';
import { createSystemAccounts } from './system-accounts.js';

export type { LedgerUnit } from './ledger-unit.js';
export type { ReconciliationCase } from './ledger-queries.js';
export type { ReconciliationCaseRecord } from './reconciliation.js';

export interface LedgerStore {
  listAwaitingReconciliation(page: PageRequest): Promise<Page<queries.ReconciliationCase>>;
  countAwaitingReconciliation(): Promise<number>;
  /** Reconciliation with the provider's own records: its cases, its job's cursor, and the admins' trail. */
  reconciliation: {
    ledgerSides(transactionIds: string[]): Promise<Map<string, LedgerSide>>;
    /** Which of these transactions were removed with their users. */
    removedAmong(transactionIds: string[]): Promise<Set<string>>;
    claimRun(leaseMs: number): Promise<{ cursor: Date | null } | null>;
    finishRun(cursor: Date | null, summary: object): Promise<void>;
    recordMismatches(mismatches: Mismatch[]): Promise<number>;
    clearAgreed(references: string[]): Promise<number>;
    openCaseCounts(): Promise<Map<MismatchKind, number>>;
    listCases(
      status: reconciliation.ReconciliationCaseRecord['status'] | null,
      page: PageRequest,
    ): Promise<Page<reconciliation.ReconciliationCaseRecord>>;
    findCase(id: string): Promise<reconciliation.ReconciliationCaseRecord | null>;
    /**
     * Runs `work` in one database transaction with the case locked (null: no such case), so two decisions on one
     * case take turns; the books are changed through `unit`, under the same locks as the money paths.
     */
    withCase<T>(caseId: string, work: (unit: LedgerUnit, found: CaseInHand) => Promise<T>): Promise<T>;
  };
  /** Runs `work` in one database transaction; throwing rolls it back. A deadlock victim is retried. */
  inTransaction<T>(work: (unit: LedgerUnit) => Promise<T>): Promise<T>;
  /**
   * Records events in the inbox and runs `work` for the ones never processed before, in one database transaction
   * with their inbox records, so each takes effect once. Returns the ids that took effect now.
   */
  processEventsOnce(
    eventIds: string[],
    work: (unit: LedgerUnit, fresh: ReadonlySet<string>) => Promise<void>,
  ): Promise<ReadonlySet<string>>;
}

/** A reconciliation case locked for a decision, and what deciding it may do in the same database transaction. */
export interface CaseInHand {
  case: reconciliation.ReconciliationCaseRecord | null;
  sides(transactionIds: string[]): Promise<Map<string, LedgerSide>>;
  decide(
    decided: { caseId: string; decision: ReconciliationDecision; reason: string; actor: string },
    detail: Record<string, unknown>,
  ): Promise<void>;
  reverseTransfer(transactionId: string, found: { payout: string | null; transfer: string }): Promise<void>;
}

export function createLedgerStore(knex: Knex): LedgerStore {
  const systemAccounts = createSystemAccounts();

  const units = unitOfWork(knex, (trx) => createLedgerUnit(trx, systemAccounts));

  return {
    listAwaitingReconciliation: (page) => queries.listAwaitingReconciliation(knex, page),
    countAwaitingReconciliation: () => queries.countAwaitingReconciliation(knex),
    reconciliation: {
      ledgerSides: (ids) => reconciliation.ledgerSides(knex, ids),
      removedAmong: (ids) => reconciliation.removedAmong(knex, ids),
      claimRun: (leaseMs) => reconciliation.claimRun(knex, leaseMs),
      finishRun: (cursor, summary) => reconciliation.finishRun(knex, cursor, summary),
      recordMismatches: (mismatches) => reconciliation.recordMismatches(knex, mismatches),
      clearAgreed: (references) => reconciliation.clearAgreed(knex, references),
      openCaseCounts: () => reconciliation.openCaseCounts(knex),
      listCases: (status, page) => reconciliation.listCases(knex, status, page),
      findCase: (id) => reconciliation.findCase(knex, id),
      withCase: (caseId, work) =>
        retryingConflicts(() =>
          knex.transaction(async (trx) =>
            work(createLedgerUnit(trx, systemAccounts), {
              case: await reconciliation.findCase(trx, caseId, { lock: true }),
              sides: (ids) => reconciliation.ledgerSides(trx, ids),
              decide: (decided, detail) => reconciliation.recordDecision(trx, decided, detail),
              reverseTransfer: (transactionId, found) =>
                reconciliation.requestTransferReversal(trx, transactionId, found),
            }),
          ),
        ),
    },
    inTransaction: units.inTransaction,
    processEventsOnce: units.processEventsOnce,
  };
}
