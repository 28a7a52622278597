import { toMinorUnits } from '@payments/contracts';
import { currentTraceCarrier, type Knex, type TraceCarrier } from '@payments/service-kit';
import type { TransactionStatus } from '../domain/transaction.js';
import type { ProviderPayment, ProviderRequestStore } from '../use-cases/provider-requests.js';
import { recordMismatches } from './reconciliation-repository.js';
import { settlementUnitOf } from './settlement-repository.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { unitOfWork } from './unit-of-work.js';

interface ProviderPaymentRow {
  transaction_id: string;
  kind: ProviderPayment['kind'];
  provider: string;
  state: ProviderPayment['state'];
  reference: string | null;
  client_secret: string | null;
  payment_method?: string | null;
  destination: string | null;
  transfer: string | null;
  cancel_requested: boolean;
  attempts: number;
  last_error: string | null;
  trace_context?: TraceCarrier | null;
}

const toProviderPayment = (row: ProviderPaymentRow): ProviderPayment => ({
  transactionId: row.transaction_id,
  kind: row.kind,
  provider: row.provider,
  state: row.state,
  reference: row.reference,
  clientSecret: row.client_secret,
  paymentMethod: row.payment_method ?? null,
  destination: row.destination,
  transfer: row.transfer,
  cancelRequested: row.cancel_requested,
  attempts: row.attempts,
  lastError: row.last_error,
  traceContext: row.trace_context ?? null,
});

/** The active trace context as a jsonb parameter: SQL NULL, not JSON null, when there is none. */
const traceContextParameter = () => {
  const carrier = currentTraceCarrier();
  return carrier && JSON.stringify(carrier);
};

/** The longest an error message is kept (the provider's own words; never a secret). */
const ERROR_LENGTH = 500;

export async function findProviderPayment(
  knex: Knex,
  transactionId: string,
): Promise<ProviderPayment | null> {
  const row: ProviderPaymentRow | undefined = await knex('provider_payments')
    .where({ transaction_id: transactionId })
    .first();
  return row ? toProviderPayment(row) : null;
}

/** provider_payments: what the ledger asks the provider for each deposit and withdrawal, and where that stands. */
export function createProviderPaymentRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): ProviderRequestStore {
  return {
    ...unitOfWork(knex, (trx) => settlementUnitOf(trx, systemAccounts)),
    recordMismatches: (mismatches) => recordMismatches(knex, mismatches),

    /**
     * Records that a pending transaction is to be asked of the provider; false when it was already, or is not
     * pending. A payout goes to the connected account its user linked, as it is when recorded (null: none, refused
     * later).
     */
    async record(request) {
      const { rowCount } = await knex.raw(
        `INSERT INTO provider_payments (transaction_id, kind, provider, destination, trace_context, payment_method)
         SELECT t.id, ?, ?, CASE WHEN ? = 'payout' THEN a.account END, ?::jsonb, ?
         FROM transactions t LEFT JOIN payout_accounts a ON a.user_id = t.user_id
         WHERE t.id = ? AND t.status = 'pending'
         ON CONFLICT (transaction_id) DO NOTHING`,
        [
          request.kind,
          request.provider,
          request.kind,
          traceContextParameter(),
          request.kind === 'payment' ? (request.paymentMethod ?? null) : null,
          request.transactionId,
        ],
      );
      return rowCount === 1;
    },

    /**
     * Claims up to `limit` requests that are due: each is not due again for `leaseMs` (a process that dies holding
     * one leaves it to another after that), and concurrent claimants skip each other's rows. The first claim of a
     * phase (creating, or undoing once `created`) is when its idempotency keys are taken to be first used.
     */
    async claim(limit, leaseMs) {
      const {
        rows,
      }: {
        rows: (ProviderPaymentRow & {
          status: TransactionStatus;
          amount: string;
          currency: string;
          keys_age_ms: string;
        })[];
      } = await knex.raw(
        `WITH due AS (
           SELECT transaction_id FROM provider_payments
           WHERE next_attempt_at <= now()
           ORDER BY next_attempt_at
           LIMIT ?
           FOR UPDATE SKIP LOCKED
         ), claimed AS (
           UPDATE provider_payments p
           SET attempts = p.attempts + 1, next_attempt_at = now() + ? * interval '1 millisecond', updated_at = now(),
               create_keys_first_used_at = CASE WHEN p.state = 'requested'
                 THEN COALESCE(p.create_keys_first_used_at, now()) ELSE p.create_keys_first_used_at END,
               undo_keys_first_used_at = CASE WHEN p.state = 'created'
                 THEN COALESCE(p.undo_keys_first_used_at, now()) ELSE p.undo_keys_first_used_at END
           FROM due
           WHERE p.transaction_id = due.transaction_id
           RETURNING p.*
         )
         SELECT c.*, t.status, t.amount, t.currency,
                extract(epoch FROM now() - CASE WHEN c.state = 'requested'
                  THEN c.create_keys_first_used_at ELSE c.undo_keys_first_used_at END) * 1000 AS keys_age_ms
         FROM claimed c JOIN transactions t ON t.id = c.transaction_id`,
        [limit, leaseMs],
      );
      return rows.map((row) => ({
        ...toProviderPayment(row),
        transactionStatus: row.status,
        amount: toMinorUnits(row.amount),
        currency: row.currency,
        keysAgeMs: Number(row.keys_age_ms),
      }));
    },

    /**
     * Extends a claim's lease while its holder still has it (nobody claimed the request since, nor recorded its
     * end): false once it was lost.
     */
    async renew(claim, leaseMs) {
      const { rowCount } = await knex.raw(
        `UPDATE provider_payments
         SET next_attempt_at = now() + ? * interval '1 millisecond'
         WHERE transaction_id = ? AND attempts = ? AND state = ? AND next_attempt_at IS NOT NULL`,
        [leaseMs, claim.transactionId, claim.attempts, claim.state],
      );
      return rowCount === 1;
    },

    /**
     * The provider created the payment, as the claim's holder asked: recorded unless the claim was lost. Due again
     * at once if a cancellation was asked for meanwhile; `cancel` is true then.
     */
    async created(claim, created) {
      const { rows }: { rows: { cancel_requested: boolean }[] } = await knex.raw(
        `UPDATE provider_payments
         SET state = 'created', reference = ?, client_secret = ?, transfer = ?, last_error = NULL, updated_at = now(),
             next_attempt_at = CASE WHEN cancel_requested THEN now() END
         WHERE transaction_id = ? AND attempts = ? AND state = 'requested'
         RETURNING cancel_requested`,
        [
          created.reference,
          created.clientSecret ?? null,
          created.transfer ?? null,
          claim.transactionId,
          claim.attempts,
        ],
      );
      return { recorded: rows.length === 1, cancel: rows[0]?.cancel_requested ?? false };
    },

    /**
     * Nothing more to do for it (unless the claim was lost): refused, skipped (its transaction ended first), closed
     * (canceled at the provider) or expired (its keys are too old to be used again).
     */
    async done(claim, state, error = null) {
      // Each ending comes from one state only: nothing made (refused, skipped), made and then undone (closed);
      // expired
      // from the phase it stopped in.
      const from = state === 'expired' ? claim.state : state === 'closed' ? 'created' : 'requested';
      const updated = await knex('provider_payments')
        .where({ transaction_id: claim.transactionId, attempts: claim.attempts, state: from })
        .update({
          state,
          last_error: error?.slice(0, ERROR_LENGTH) ?? null,
          next_attempt_at: null,
          updated_at: knex.fn.now(),
        });
      return updated === 1;
    },

    /** A call that did not go through: tried again after `delayMs` (unless the claim was lost). */
    async retry(claim, delayMs, error) {
      await knex.raw(
        `UPDATE provider_payments
         SET next_attempt_at = now() + ? * interval '1 millisecond', last_error = ?, updated_at = now()
         WHERE transaction_id = ? AND attempts = ? AND next_attempt_at IS NOT NULL`,
        [delayMs, error.slice(0, ERROR_LENGTH), claim.transactionId, claim.attempts],
      );
    },

    /** Requests still waiting for the provider, and the age of the oldest in seconds. */
    async backlog() {
      const row: { waiting: string; oldest: string | null } = await knex('provider_payments')
        .whereNotNull('next_attempt_at')
        .first(
          knex.raw('count(*) AS waiting'),
          knex.raw('extract(epoch FROM now() - min(created_at)) AS oldest'),
        );
      return { waiting: Number(row.waiting), oldestSeconds: Number(row.oldest ?? 0) };
    },
  };
}
