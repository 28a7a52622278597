import type { AnyEvent, MinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { NewTransaction, Transaction } from '../domain/transaction.js';
import { fromSnapshot, transactionSnapshot } from './records.js';

/** A money request to accept: the transaction, what it holds, its requested event and its idempotency key. */
export interface AcceptanceRequest {
  draft: NewTransaction;
  hold: MinorUnits;
  /** The destination account's currency as the request saw it (transfers); it must still hold it. */
  counterpartyCurrency: string | null;
  /** The event announcing the request, recorded in the outbox with it; null records none. */
  event: AnyEvent | null;
  idempotency: { key: string; fingerprint: string } | null;
}

/** Nothing is written for any outcome but `accepted`. */
export type AcceptanceOutcome =
  | { kind: 'accepted'; transaction: Transaction }
  | { kind: 'replay'; fingerprint: string; transaction: Transaction }
  | { kind: 'account_not_found' | 'forbidden' | 'insufficient_funds' | 'destination_not_found' };

interface AcceptanceRow {
  o_outcome: string;
  o_fingerprint: string | null;
  o_response: Record<string, unknown> | null;
  o_created_at: Date | null;
}

const ACCEPT = `SELECT o_outcome, o_fingerprint, o_response, o_created_at FROM ledger_accept_request(
  ?::uuid, ?::uuid, ?::uuid, ?::text, ?::bigint, ?::text, ?::bigint, ?::bigint, ?::uuid, ?::uuid, ?::text,
  ?::numeric, ?::bigint, ?::text, ?::text, ?::uuid, ?::jsonb, ?::text, ?::text, ?::jsonb)`;

/** A refusal after the idempotency key was claimed: raised so the claim rolls back; the message says why. */
const REFUSED = 'LK422';

/** The transaction as the acceptance writes it (the database sets the timestamps). */
function pendingOf(draft: NewTransaction, createdAt: Date): Transaction {
  return {
    ...draft,
    status: 'pending',
    failureReason: null,
    originalTransactionId: null,
    reversalReason: null,
    heldAmount: null,
    createdAt,
    updatedAt: createdAt,
    completedAt: null,
  };
}

/**
 * Accepts a deposit, withdrawal or transfer in one statement (ledger_accept_request, migration 009): one round
 * trip and one database transaction. A refusal after the key's claim comes back as an error (LK422), which undid
 * the claim.
 */
export async function acceptRequest(knex: Knex, request: AcceptanceRequest): Promise<AcceptanceOutcome> {
  const { draft, idempotency } = request;
  const snapshot = idempotency ? JSON.stringify(transactionSnapshot(pendingOf(draft, new Date(0)))) : null;
  const bindings = [
    draft.id,
    draft.accountId,
    draft.userId,
    draft.type,
    draft.amount.toString(),
    draft.currency,
    draft.fee.toString(),
    request.hold.toString(),
    draft.counterpartyAccountId,
    draft.counterpartyUserId,
    request.counterpartyCurrency,
    draft.exchangeRate,
    draft.convertedAmount?.toString() ?? null,
    draft.convertedCurrency,
    draft.paymentId,
    request.event?.id ?? null,
    request.event ? JSON.stringify(request.event) : null,
    idempotency?.key ?? null,
    idempotency?.fingerprint ?? null,
    snapshot,
  ];
  let outcome: string;
  let row: AcceptanceRow | undefined;
  try {
    const result: { rows: AcceptanceRow[] } = await knex.raw(ACCEPT, bindings);
    row = result.rows[0] as AcceptanceRow;
    outcome = row.o_outcome;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code !== REFUSED) throw error;
    outcome = /(\w+)$/.exec(message ?? '')?.[1] ?? '';
  }
  switch (outcome) {
    case 'accepted':
      return { kind: 'accepted', transaction: pendingOf(draft, row?.o_created_at as Date) };
    case 'replay':
      return {
        kind: 'replay',
        fingerprint: row?.o_fingerprint as string,
        transaction: fromSnapshot(row?.o_response as Record<string, unknown>),
      };
    case 'account_not_found':
    case 'forbidden':
    case 'insufficient_funds':
    case 'destination_not_found':
      return { kind: outcome };
    default:
      throw new Error(`ledger_accept_request answered ${outcome}`);
  }
}
