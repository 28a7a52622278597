import { randomUUID } from 'node:crypto';
import type { ReconciliationDecision } from '@payments/contracts';
import { readingDirection, turned, unknownCursor, type Knex, type PageCursor } from '@payments/service-kit';
import type { Mismatch, MismatchKind } from '../domain/reconciliation.js';
import type {
  ReconciliationCaseRecord,
  ReconciliationStore,
  UnconfirmedWithdrawal,
} from '../use-cases/reconciliation.js';
import { recordAdminAction } from './admin-action-repository.js';
import { ledgerSides, removedAmong } from './ledger-sides.js';
import { readPage } from './pages.js';
import { toTransaction, type TransactionRow } from './records.js';
import { reversalUnitOf } from './reversal-repository.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { retryingConflicts } from './unit-of-work.js';

interface CaseRow {
  id: string;
  kind: MismatchKind;
  provider_reference: string;
  transaction_id: string | null;
  currency: string;
  provider_amount: string;
  ledger_amount: string;
  status: ReconciliationCaseRecord['status'];
  decision: ReconciliationCaseRecord['decision'];
  reason: string | null;
  resolved_by: string | null;
  found_at: Date;
  last_seen_at: Date;
  resolved_at: Date | null;
}

const toCase = (row: CaseRow): ReconciliationCaseRecord => ({
  id: row.id,
  kind: row.kind,
  reference: row.provider_reference,
  transactionId: row.transaction_id,
  currency: row.currency,
  providerAmount: BigInt(row.provider_amount),
  ledgerAmount: BigInt(row.ledger_amount),
  status: row.status,
  decision: row.decision,
  reason: row.reason,
  resolvedBy: row.resolved_by,
  foundAt: row.found_at,
  lastSeenAt: row.last_seen_at,
  resolvedAt: row.resolved_at,
});

/**
 * Claims the job for `leaseMs` (one run at a time across the ledger's processes); null while another run holds it.
 * Answers the cursor the last run left (null before the first).
 */
async function claimRun(knex: Knex, leaseMs: number): Promise<{ cursor: Date | null } | null> {
  const { rows }: { rows: { cursor: Date | null }[] } = await knex.raw(
    `UPDATE reconciliation_state SET running_until = now() + ? * interval '1 millisecond'
     WHERE running_until IS NULL OR running_until < now()
     RETURNING cursor`,
    [leaseMs],
  );
  return rows[0] ?? null;
}

/** Ends a run: the next one starts from `cursor`; `summary` is what this one found. */
async function finishRun(knex: Knex, cursor: Date | null, summary: object): Promise<void> {
  await knex('reconciliation_state').update({
    cursor: cursor ?? knex.raw('cursor'),
    running_until: null,
    last_run: JSON.stringify(summary),
  });
}

/**
 * Records mismatches found: a new one opens a case, one seen before is the same case (seen again; a cleared one
 * opens again, a decided one stays decided). Answers how many cases are new.
 */
export async function recordMismatches(knex: Knex, found: Mismatch[]): Promise<number> {
  const key = (m: Mismatch) => `${m.kind} ${m.reference} ${m.providerAmount} ${m.ledgerAmount}`;
  const mismatches = [...new Map(found.map((m) => [key(m), m])).values()];
  if (mismatches.length === 0) return 0;
  const { rows }: { rows: { id: string; opened: boolean }[] } = await knex.raw(
    `INSERT INTO reconciliation_cases AS c
       (id, kind, provider_reference, transaction_id, currency, provider_amount, ledger_amount)
     SELECT * FROM unnest(?::uuid[], ?::text[], ?::text[], ?::uuid[], ?::text[], ?::bigint[], ?::bigint[])
     ON CONFLICT (kind, provider_reference, provider_amount, ledger_amount) DO UPDATE
       SET last_seen_at = now(), status = CASE WHEN c.status = 'cleared' THEN 'open' ELSE c.status END
     RETURNING id, xmax = 0 AS opened`,
    [
      mismatches.map(() => randomUUID()),
      mismatches.map((m) => m.kind),
      mismatches.map((m) => m.reference),
      mismatches.map((m) => m.transactionId) as string[],
      mismatches.map((m) => m.currency),
      mismatches.map((m) => m.providerAmount.toString()),
      mismatches.map((m) => m.ledgerAmount.toString()),
    ],
  );
  // A reference has one open case: the mismatch it has now. One it had before (other amounts) is over.
  await knex('reconciliation_cases')
    .where({ status: 'open' })
    .whereRaw('provider_reference = ANY(?::text[])', [mismatches.map((m) => m.reference)])
    .whereRaw('id <> ALL(?::uuid[])', [rows.map((row) => row.id)])
    .update({ status: 'cleared', last_seen_at: knex.fn.now() });
  return rows.filter((row) => row.opened).length;
}

/** Clears the open cases of these references: the provider and the books agree about them now. */
async function clearAgreed(knex: Knex, references: string[]): Promise<number> {
  if (references.length === 0) return 0;
  return knex('reconciliation_cases')
    .whereRaw('provider_reference = ANY(?::text[])', [references])
    .where({ status: 'open' })
    .update({ status: 'cleared', last_seen_at: knex.fn.now() });
}

async function openCaseCounts(knex: Knex): Promise<Map<MismatchKind, number>> {
  const rows: { kind: MismatchKind; count: string }[] = await knex('reconciliation_cases')
    .where({ status: 'open' })
    .groupBy('kind')
    .select('kind', knex.raw('count(*) AS count'));
  return new Map(rows.map((row) => [row.kind, Number(row.count)]));
}

async function findCase(
  knex: Knex,
  id: string,
  options: { lock?: boolean } = {},
): Promise<ReconciliationCaseRecord | null> {
  const query = knex('reconciliation_cases').where({ id }).first<CaseRow | undefined>('*');
  const row = await (options.lock ? query.forUpdate() : query);
  return row ? toCase(row) : null;
}

/** Records an admin's decision on an open case, with its entry in the trail of admin actions. */
async function recordDecision(
  knex: Knex,
  decided: { caseId: string; decision: ReconciliationDecision; reason: string; actor: string },
  detail: Record<string, unknown>,
): Promise<void> {
  await knex('reconciliation_cases').where({ id: decided.caseId }).update({
    status: 'resolved',
    decision: decided.decision,
    reason: decided.reason,
    resolved_by: decided.actor,
    resolved_at: knex.fn.now(),
  });
  // Whose: the user of the case's transaction, while it exists (a removed user's deposit has none).
  const transaction = await knex('reconciliation_cases as c')
    .join('transactions as t', 't.id', 'c.transaction_id')
    .where('c.id', decided.caseId)
    .first<{ user_id: string } | undefined>('t.user_id');
  await recordAdminAction(knex, {
    actor: decided.actor,
    action: `reconciliation.${decided.decision}`,
    subject: `reconciliation_case:${decided.caseId}`,
    owner: transaction?.user_id ?? null,
    reason: decided.reason,
    detail,
  });
}

/**
 * Asks again for a payout's transfer to be taken back (reconciliation found it never was): the request is made
 * due with what the provider's records name, whatever state it had reached. Its undo's keys count afresh: a whole
 * reversal cannot happen twice at the provider, whatever the key.
 */
async function requestTransferReversal(
  knex: Knex,
  transactionId: string,
  found: { payout: string | null; transfer: string },
): Promise<void> {
  await knex('provider_payments')
    .where({ transaction_id: transactionId })
    .update({
      state: 'created',
      reference: knex.raw('COALESCE(reference, ?)', [found.payout ?? found.transfer]),
      transfer: found.transfer,
      cancel_requested: true,
      undo_keys_first_used_at: null,
      next_attempt_at: knex.fn.now(),
      updated_at: knex.fn.now(),
    });
}

/**
 * The queue as one ordered union: the waiting withdrawals (part 0, by when they were flagged), then the open cases
 * (part 1, by when they were found), each by `id` last; so a page by cursor follows the order offset pages in.
 */
const WAITING = `
  SELECT 0 AS part, reconciliation_required_at AS since, id FROM transactions
  WHERE status = 'pending' AND reconciliation_required_at IS NOT NULL
  UNION ALL
  SELECT 1, found_at, id FROM reconciliation_cases WHERE status = 'open'`;

/**
 * Where a cursor stands in the queue: a withdrawal once flagged or a case once found, whether or not it still
 * waits, since an operator pages on from an item they have just settled.
 */
const CURSOR_AT = `
  SELECT 0 AS part, reconciliation_required_at AS since, id FROM transactions
  WHERE id = :cursor AND reconciliation_required_at IS NOT NULL
  UNION ALL
  SELECT 1, found_at, id FROM reconciliation_cases WHERE id = :cursor`;

/** A page of the queue by cursor, in its order (withdrawals first), and whether more follow it. */
async function listWaitingByCursor(
  knex: Knex,
  { limit, cursor }: { limit: number; cursor: PageCursor },
): Promise<{ withdrawals: UnconfirmedWithdrawal[]; cases: ReconciliationCaseRecord[]; hasMore: boolean }> {
  const reading = readingDirection({ keys: [], direction: 'asc' }, cursor);
  const [found, read]: [{ rows: unknown[] }, { rows: { part: number; id: string }[] }] = await Promise.all([
    knex.raw(CURSOR_AT, { cursor: cursor.id }),
    knex.raw(
      `SELECT part, id FROM (${WAITING}) waiting
       WHERE (part, since, id) ${reading === 'asc' ? '>' : '<'} (SELECT part, since, id FROM (${CURSOR_AT}) at)
       ORDER BY part ${reading}, since ${reading}, id ${reading}
       LIMIT :take`,
      { cursor: cursor.id, take: limit + 1 },
    ),
  ]);
  if (found.rows.length === 0) throw unknownCursor(cursor);
  const page = turned(read.rows.slice(0, limit), cursor);
  const idsOf = (part: number) => page.filter((row) => row.part === part).map((row) => row.id);
  const [withdrawalIds, caseIds] = [idsOf(0), idsOf(1)];
  // Each item as it is now (one settled since the page was read shows so), in the page's order.
  const [transactions, cases] = await Promise.all([
    withdrawalIds.length === 0
      ? []
      : (knex('transactions').whereIn('id', withdrawalIds).select('*') as Promise<
          (TransactionRow & { reconciliation_required_at: Date })[]
        >),
    caseIds.length === 0 ? [] : (knex('reconciliation_cases').whereIn('id', caseIds) as Promise<CaseRow[]>),
  ]);
  const inOrder = <Row extends { id: string }>(ids: string[], rows: Row[]) =>
    ids.flatMap((id) => rows.filter((row) => row.id === id));
  return {
    withdrawals: inOrder(withdrawalIds, transactions).map((row) => ({
      transaction: toTransaction(row),
      flaggedAt: row.reconciliation_required_at,
    })),
    cases: inOrder(caseIds, cases).map(toCase),
    hasMore: read.rows.length > limit,
  };
}

export function createReconciliationRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): ReconciliationStore {
  // Withdrawals the provider may have received that outlived their hold expiry.
  const flagged = () =>
    knex('transactions').where('status', 'pending').whereNotNull('reconciliation_required_at');

  return {
    /** Longest waiting first. */
    listAwaitingReconciliation: (page) =>
      readPage(knex, flagged, page, {
        columns: '*',
        order: [{ column: 'reconciliation_required_at' }, { column: 'id' }],
        toItem: (row: TransactionRow & { reconciliation_required_at: Date }) => ({
          transaction: toTransaction(row),
          flaggedAt: row.reconciliation_required_at,
        }),
      }),
    listWaitingByCursor: (request) => listWaitingByCursor(knex, request),
    async countAwaitingReconciliation() {
      const [count] = await flagged().count<{ count: string }[]>('*');
      return Number(count?.count ?? 0);
    },
    ledgerSides: (ids) => ledgerSides(knex, ids),
    removedAmong: (ids) => removedAmong(knex, ids),
    claimRun: (leaseMs) => claimRun(knex, leaseMs),
    finishRun: (cursor, summary) => finishRun(knex, cursor, summary),
    recordMismatches: (mismatches) => recordMismatches(knex, mismatches),
    clearAgreed: (references) => clearAgreed(knex, references),
    openCaseCounts: () => openCaseCounts(knex),
    /** In the order found; `status` narrows them (open ones by default in the API). */
    listCases: (status, page) =>
      readPage(
        knex,
        () => (status ? knex('reconciliation_cases').where({ status }) : knex('reconciliation_cases')),
        page,
        { columns: '*', order: [{ column: 'found_at' }, { column: 'id' }], toItem: toCase },
      ),
    findCase: (id) => findCase(knex, id),
    withCase: (caseId, work) =>
      retryingConflicts(() =>
        knex.transaction(async (trx) =>
          work(reversalUnitOf(trx, systemAccounts), {
            case: await findCase(trx, caseId, { lock: true }),
            sides: (ids) => ledgerSides(trx, ids),
            decide: (decided, detail) => recordDecision(trx, decided, detail),
            reverseTransfer: (transactionId, found) => requestTransferReversal(trx, transactionId, found),
          }),
        ),
      ),
  };
}
