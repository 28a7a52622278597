import type { Knex } from '@payments/service-kit';
import type { ReversalUnit } from '../use-cases/reversals.js';
import { reversalUnitOf } from './reversal-repository.js';
import type { SystemAccounts } from './system-accounts.js';

/** The operations of one database transaction: every change to money goes through here. */
export interface LedgerUnit extends ReversalUnit {
  /**
   * Takes back a withdrawal's request to the provider if the outbox relay never published it (an attempt under
   * way is waited for, briefly); true when it was taken back, so the provider can never have seen it.
   */
  recallProviderRequest(transactionId: string): Promise<boolean>;
  /** Marks a pending withdrawal as awaiting reconciliation, once; true when this call marked it. */
  flagForReconciliation(transactionId: string): Promise<boolean>;
}

/** How long an expiry waits for the outbox relay to finish publishing a withdrawal's request. */
const RELAY_WAIT = '2s';
const LOCK_NOT_AVAILABLE = '55P03';

export function createLedgerUnit(trx: Knex.Transaction, systemAccounts: SystemAccounts): LedgerUnit {
  return {
    ...reversalUnitOf(trx, systemAccounts),

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
