import { toMinorUnits, type RefundReason } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { RefundAsk, RefundStore, RefundUnit } from '../use-cases/refunds.js';
import { recordAdminAction } from './admin-action-repository.js';
import { toTransaction, type TransactionRow } from './records.js';
import { reversalUnitOf } from './reversal-repository.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { unitOfWork } from './unit-of-work.js';

/** The longest error message kept (the provider's own words). */
const ERROR_LENGTH = 500;

interface AskRow {
  transaction_id: string;
  deposit_id: string;
  payment: string;
  reason: RefundReason | null;
  amount: string;
  currency: string;
}

const toAsk = (row: AskRow): RefundAsk => ({
  refundId: row.transaction_id,
  depositId: row.deposit_id,
  payment: row.payment,
  amount: toMinorUnits(BigInt(row.amount)),
  currency: row.currency,
  reason: row.reason,
});

/** Refunds asked for through the API: their reversals (the reversal path's unit) and refund_requests. */
export function createRefundRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): RefundStore {
  const unitOf = (trx: Knex.Transaction): RefundUnit => ({
    ...reversalUnitOf(trx, systemAccounts),

    async claimKey({ userId, key, fingerprint, transactionId }) {
      const inserted: { transaction_id: string }[] = await trx('idempotency_keys')
        .insert({ user_id: userId, key, fingerprint, transaction_id: transactionId })
        .onConflict(['user_id', 'key'])
        .ignore()
        .returning('transaction_id');
      if (inserted.length > 0) return null;
      const row: { fingerprint: string; transaction_id: string } | undefined = await trx('idempotency_keys')
        .where({ user_id: userId, key })
        .first('fingerprint', 'transaction_id');
      if (!row) throw new Error(`idempotency key of ${userId} neither claimed nor found`);
      return { fingerprint: row.fingerprint, transactionId: row.transaction_id };
    },

    async providerPaymentOf(depositId) {
      const row: { reference: string | null } | undefined = await trx('provider_payments')
        .where({ transaction_id: depositId, kind: 'payment' })
        .first('reference');
      return row?.reference ?? null;
    },

    async insertRefundRequest({ refundId, depositId, payment, reason, requestedBy }) {
      await trx('refund_requests').insert({
        transaction_id: refundId,
        deposit_id: depositId,
        payment,
        reason,
        requested_by: requestedBy,
      });
    },

    recordAdminAction: (action) => recordAdminAction(trx, action),
  });

  return {
    ...unitOfWork(knex, unitOf),

    async findKey(userId, key) {
      const row: { fingerprint: string; transaction_id: string } | undefined = await knex('idempotency_keys')
        .where({ user_id: userId, key })
        .first('fingerprint', 'transaction_id');
      return row ? { fingerprint: row.fingerprint, transactionId: row.transaction_id } : null;
    },

    async findTransaction(transactionId) {
      const row: TransactionRow | undefined = await knex('transactions').where({ id: transactionId }).first();
      return row ? toTransaction(row) : null;
    },

    async answered(refundId, providerRefund) {
      await knex('refund_requests')
        .where({ transaction_id: refundId })
        .update({ provider_refund: providerRefund, last_error: null });
    },

    async attemptFailed(refundId, error) {
      await knex('refund_requests')
        .where({ transaction_id: refundId })
        .update({ attempts: knex.raw('attempts + 1'), last_error: error.slice(0, ERROR_LENGTH) });
    },

    async unanswered(olderThanMs, withinMs, limit) {
      const rows: AskRow[] = await knex('refund_requests as r')
        .join('transactions as t', 't.id', 'r.transaction_id')
        .whereNull('r.provider_refund')
        .where('t.status', 'pending')
        .where('r.created_at', '<', knex.raw(`now() - make_interval(secs => ?)`, [olderThanMs / 1000]))
        .where('r.created_at', '>', knex.raw(`now() - make_interval(secs => ?)`, [withinMs / 1000]))
        .orderBy('r.created_at')
        .limit(limit)
        .select('r.transaction_id', 'r.deposit_id', 'r.payment', 'r.reason', 't.amount', 't.currency');
      return rows.map(toAsk);
    },
  };
}
