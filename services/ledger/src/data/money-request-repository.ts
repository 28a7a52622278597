import { createBatcher, currentTraceCarrier, type Knex, type TraceCarrier } from '@payments/service-kit';
import type { NewTransaction, Transaction } from '../domain/transaction.js';
import type { AcceptanceOutcome, AcceptanceRequest, MoneyRequestStore } from '../use-cases/money-requests.js';
import { fromSnapshot, transactionSnapshot, USER_ACCOUNT } from './records.js';
import { retryingConflicts } from './unit-of-work.js';

interface OutcomeRow {
  o_index: number;
  o_outcome: string;
  o_fingerprint: string | null;
  o_response: Record<string, unknown> | null;
  o_created_at: Date;
}

/** A request with the trace it arrived in: requests accepted together each keep their own (ADR 0112). */
type TracedRequest = AcceptanceRequest & { traceContext: TraceCarrier | null };

const ACCEPT = `SELECT o_index, o_outcome, o_fingerprint, o_response, o_created_at FROM ledger_accept_requests(?::jsonb)`;

/** The most requests one statement (and database transaction) accepts. */
const BATCH_SIZE = 64;

/** The transaction as the acceptance writes it (the database sets the timestamps). */
function pendingOf(draft: NewTransaction, createdAt: Date): Transaction {
  return {
    ...draft,
    status: 'pending',
    failureReason: null,
    originalTransactionId: null,
    reversalReason: null,
    heldAmount: null,
    metadata: draft.metadata ?? {},
    reference: draft.reference ?? null,
    createdAt,
    updatedAt: createdAt,
    completedAt: null,
  };
}

function requestRecord(request: TracedRequest, index: number) {
  const { draft, idempotencyKey } = request;
  // A key or a reference each keep the first answer, to replay it.
  const claimed = request.fingerprint !== null;
  return {
    i: index,
    id: draft.id,
    account_id: draft.accountId,
    user_id: draft.userId,
    type: draft.type,
    amount: draft.amount.toString(),
    currency: draft.currency,
    fee: draft.fee.toString(),
    hold: request.hold.toString(),
    counterparty_account_id: draft.counterpartyAccountId,
    counterparty_user_id: draft.counterpartyUserId,
    counterparty_currency: request.counterpartyCurrency,
    exchange_rate: draft.exchangeRate,
    converted_amount: draft.convertedAmount?.toString() ?? null,
    converted_currency: draft.convertedCurrency,
    payment_id: draft.paymentId,
    event_id: request.event?.id ?? null,
    event: request.event,
    key: idempotencyKey,
    fingerprint: request.fingerprint,
    metadata: draft.metadata ?? {},
    reference: draft.reference ?? null,
    payout_account_required: request.payoutAccountRequired,
    trace_context: request.traceContext,
    // The timestamps are the database's: the statement sets them.
    snapshot: claimed ? transactionSnapshot(pendingOf(draft, new Date(0))) : null,
  };
}

function outcomeOf(request: AcceptanceRequest, row: OutcomeRow | undefined): AcceptanceOutcome {
  switch (row?.o_outcome) {
    case 'accepted':
      return { kind: 'accepted', transaction: pendingOf(request.draft, row.o_created_at) };
    case 'replay':
    case 'reference_replay':
      return {
        kind: row.o_outcome,
        fingerprint: row.o_fingerprint as string,
        transaction: fromSnapshot(row.o_response as Record<string, unknown>),
      };
    case 'account_not_found':
    case 'forbidden':
    case 'insufficient_funds':
    case 'destination_not_found':
    case 'payout_account_missing':
      return { kind: row.o_outcome };
    default:
      throw new Error(`ledger_accept_requests answered ${row?.o_outcome ?? 'nothing'} for a request`);
  }
}

/** Accepts the requests in one statement (ledger_accept_requests, migration 027): one round trip, one commit. */
async function acceptTogether(knex: Knex, requests: TracedRequest[]): Promise<AcceptanceOutcome[]> {
  // Holds lock accounts in id order, the order settlements lock them in: the two never deadlock.
  const records = requests
    .map(requestRecord)
    .sort((a, b) => (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : a.i - b.i));
  const { rows }: { rows: OutcomeRow[] } = await knex.raw(ACCEPT, [JSON.stringify(records)]);
  const byIndex = new Map(rows.map((row) => [row.o_index, row]));
  return requests.map((request, index) => outcomeOf(request, byIndex.get(index)));
}

/**
 * Money requests that arrive together are accepted together (group commit, the kit's batcher): one statement and
 * one commit for up to BATCH_SIZE of them. A request reusing the idempotency key or the reference of one still
 * under way waits for it, so no statement holds the same claim twice and the replay finds the first one's answer
 * (between processes, the claims' primary keys decide). A statement that
 * fails (it rolled back entirely) is retried request by request (the batcher), so a request that cannot be
 * accepted fails alone.
 */
function createAcceptor(knex: Knex): MoneyRequestStore['accept'] {
  const batcher = createBatcher<TracedRequest, AcceptanceOutcome>(
    (requests) => retryingConflicts(() => acceptTogether(knex, requests)),
    { maxSize: BATCH_SIZE },
  );
  const keysUnderWay = new Map<string, Promise<unknown>>();
  return async (untraced) => {
    const request = { ...untraced, traceContext: currentTraceCarrier() };
    const { idempotencyKey, draft } = request;
    const claims = [
      ...(idempotencyKey ? [`${draft.userId}\u0000key\u0000${idempotencyKey}`] : []),
      ...(draft.reference ? [`${draft.userId}\u0000reference\u0000${draft.reference}`] : []),
    ];
    if (claims.length === 0) return batcher.submit(request);
    const ahead = () => claims.map((claim) => keysUnderWay.get(claim)).find((found) => found !== undefined);
    for (let waiting = ahead(); waiting; waiting = ahead()) await waiting.catch(() => undefined);
    const accepting = batcher.submit(request);
    for (const claim of claims) keysUnderWay.set(claim, accepting);
    try {
      return await accepting;
    } finally {
      for (const claim of claims) if (keysUnderWay.get(claim) === accepting) keysUnderWay.delete(claim);
    }
  };
}

export function createMoneyRequestRepository(knex: Knex): MoneyRequestStore {
  return {
    async findAccountFacts(accountIds) {
      const { rows }: { rows: { id: string; user_id: string; currency: string }[] } = await knex.raw(
        `SELECT id, user_id, currency FROM accounts WHERE id = ANY(?::uuid[]) AND ${USER_ACCOUNT}`,
        [accountIds],
      );
      return rows.map((row) => ({ id: row.id, userId: row.user_id, currency: row.currency }));
    },
    accept: createAcceptor(knex),
  };
}
