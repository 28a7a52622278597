import { randomUUID } from 'node:crypto';
import type { Knex } from '@payments/service-kit';
import { isUuid } from '../domain/identifiers.js';
import type { KnownObject, RecordedRequest } from '../domain/provider-object.js';
import type { Mismatch } from '../domain/reconciliation.js';
import type { ProviderObjectStore } from '../use-cases/provider-payments.js';
import { unitOfWork } from './unit-of-work.js';

interface RequestRow {
  transaction_id: string;
  kind: RecordedRequest['kind'];
  state: string;
  reference: string | null;
  destination: string | null;
}

const toRequest = (row: RequestRow): RecordedRequest => ({
  transactionId: row.transaction_id,
  kind: row.kind,
  state: row.state,
  reference: row.reference,
  destination: row.destination,
});

/**
 * What the ledger knows of a provider object (the request it recorded it for; a removed user's deposit keeps its
 * payment's reference) and of the transaction `hint` names, in one round trip.
 */
async function findKnownObject(knex: Knex, objectId: string, hint: string | null): Promise<KnownObject> {
  const named = isUuid(hint) ? hint.toLowerCase() : null;
  const { rows }: { rows: (RequestRow & { found: 'recorded' | 'named'; has_request: boolean })[] } =
    await knex.raw(
      `SELECT 'recorded' AS found, true AS has_request, transaction_id, kind, state, reference, destination
       FROM provider_payments WHERE reference = ?
       UNION ALL
       SELECT 'recorded', true, deposit_id, 'payment', 'created', provider_reference, NULL
       FROM removed_deposits WHERE provider_reference = ?
       UNION ALL
       SELECT 'named', p.transaction_id IS NOT NULL, t.id, p.kind, p.state, p.reference, p.destination
       FROM transactions t LEFT JOIN provider_payments p ON p.transaction_id = t.id
       WHERE t.id = ?::uuid
       UNION ALL
       SELECT 'named', provider_reference IS NOT NULL, deposit_id, 'payment', 'created', provider_reference, NULL
       FROM removed_deposits WHERE deposit_id = ?::uuid
       LIMIT 4`,
      [objectId, objectId, named, named],
    );
  const recorded = rows.find((row) => row.found === 'recorded');
  const hinted = rows.find((row) => row.found === 'named');
  return {
    recorded: recorded ? toRequest(recorded) : null,
    named: hinted
      ? { transactionId: hinted.transaction_id, request: hinted.has_request ? toRequest(hinted) : null }
      : null,
  };
}

/**
 * Records a provider object that moved no money here because the ledger never asked for it: a case, unless its
 * reference has an open one already (reconciliation's, say, which sees its whole picture), or any case at all when
 * `unlessKnown` (a refund or dispute of an object already looked at: giving an extra capture back refunds it), or
 * this very one was seen before. True when a case opened.
 */
async function recordUnmatchedObject(knex: Knex, mismatch: Mismatch, unlessKnown = false): Promise<boolean> {
  const { rowCount } = await knex.raw(
    `INSERT INTO reconciliation_cases
       (id, kind, provider_reference, transaction_id, currency, provider_amount, ledger_amount)
     SELECT ?, ?, ?, ?, ?, ?, ?
     WHERE NOT EXISTS (
       SELECT 1 FROM reconciliation_cases WHERE provider_reference = ? AND (status = 'open' OR ?)
     )
     ON CONFLICT (kind, provider_reference, provider_amount, ledger_amount) DO NOTHING`,
    [
      randomUUID(),
      mismatch.kind,
      mismatch.reference,
      mismatch.transactionId,
      mismatch.currency,
      mismatch.providerAmount.toString(),
      mismatch.ledgerAmount.toString(),
      mismatch.reference,
      unlessKnown,
    ],
  );
  return rowCount === 1;
}

/** The provider objects the ledger knows (its requests, removed users' deposits), and the ones it does not. */
export function createProviderObjectRepository(knex: Knex): ProviderObjectStore {
  return {
    ...unitOfWork(knex, (trx) => ({
      recordUnmatchedObject: (mismatch, unlessKnown) => recordUnmatchedObject(trx, mismatch, unlessKnown),
    })),
    knownObject: (objectId, hint) => findKnownObject(knex, objectId, hint),
  };
}
