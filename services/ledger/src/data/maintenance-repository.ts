import type { Knex } from '@payments/service-kit';
import type { ExpiryUnit, MaintenanceStore } from '../use-cases/maintenance.js';
import { runAudit } from './audit.js';
import { compactHistoryCounts } from './history-counts.js';
import { settlementUnitOf } from './settlement-repository.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { unitOfWork } from './unit-of-work.js';

/** How long an expiry waits for the outbox relay to finish publishing a withdrawal's request. */
const RELAY_WAIT = '2s';
const LOCK_NOT_AVAILABLE = '55P03';

/** Expiry's operations in the database transaction `trx`, settlement's among them. */
function expiryUnitOf(trx: Knex.Transaction, systemAccounts: SystemAccounts): ExpiryUnit {
  return {
    ...settlementUnitOf(trx, systemAccounts),

    async recallProviderRequest(transactionId) {
      // The relay holds a row locked while it publishes it: wait for that attempt to end (published, or failed
      // and back to unpublished), but no longer than RELAY_WAIT; a relay stuck that long may have handed it out.
      const { rows: setting }: { rows: { value: string }[] } = await trx.raw(
        `SELECT current_setting('lock_timeout') AS value`,
      );
      try {
        return await trx.transaction(async (savepoint) => {
          await savepoint.raw(`SELECT set_config('lock_timeout', ?, true)`, [RELAY_WAIT]);
          const { rows }: { rows: { seq: string }[] } = await savepoint.raw(
            `SELECT seq FROM outbox
             WHERE published_at IS NULL AND event ->> 'type' = 'WithdrawalRequested'
               AND event -> 'data' ->> 'transaction_id' = ?
             FOR UPDATE`,
            [transactionId],
          );
          await savepoint.raw(`SELECT set_config('lock_timeout', ?, true)`, [setting[0]?.value ?? '0']);
          if (rows.length === 0) return false;
          await savepoint('outbox')
            .whereIn(
              'seq',
              rows.map((row) => row.seq),
            )
            .delete();
          return true;
        });
      } catch (error) {
        if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
        throw error;
      }
    },

    async flagForReconciliation(transactionId) {
      const flagged = await trx('transactions')
        .where({ id: transactionId, status: 'pending', type: 'withdrawal' })
        .whereNull('reconciliation_required_at')
        .update({ reconciliation_required_at: trx.fn.now(), updated_at: trx.fn.now() });
      return flagged === 1;
    },
  };
}

export function createMaintenanceRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): MaintenanceStore {
  return {
    ...unitOfWork(knex, (trx) => expiryUnitOf(trx, systemAccounts)),

    async expiredHolds(cutoff, limit) {
      const rows: { id: string }[] = await knex('transactions')
        .where('status', 'pending')
        .whereIn('type', ['withdrawal', 'transfer'])
        .where('created_at', '<', cutoff)
        .whereNull('reconciliation_required_at')
        .orderBy('created_at')
        .limit(limit)
        .select('id');
      return rows.map((row) => row.id);
    },

    async expiredDeposits(cutoff, limit) {
      const rows: { id: string }[] = await knex('transactions')
        .where('status', 'pending')
        .where('type', 'deposit')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(limit)
        .select('id');
      return rows.map((row) => row.id);
    },

    deleteIdempotencyKeysBefore: (cutoff) =>
      knex('idempotency_keys').where('created_at', '<', cutoff).delete(),
    deleteAttemptFailuresBefore: (cutoff) =>
      knex('payment_attempt_failures').where('failed_at', '<', cutoff).delete(),
    compactHistoryCounts: (limit) => compactHistoryCounts(knex, limit),
    audit: () => runAudit(knex),
  };
}
