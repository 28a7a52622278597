import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { NewPlatformLoss, PlatformLoss, RemovedDeposit } from '../domain/platform-loss.js';
import { lossOf } from '../domain/settlement.js';
import type { Account } from '../domain/transaction.js';
import type { SettlementUnit } from '../use-cases/settlement-requests.js';
import { createJournal } from './journal.js';
import { findRemovedDeposits, insertPlatformLoss } from './platform-losses.js';
import { ACCOUNT_COLUMNS, toAccount, USER_ACCOUNT, type AccountRow } from './records.js';
import { settlementUnitOf } from './settlement-repository.js';
import type { SystemAccounts } from './system-accounts.js';

/** The operations of one database transaction: every change to money goes through here. */
export interface LedgerUnit extends SettlementUnit {
  /** Reads a user account and locks its balances until commit (as a settlement would). */
  lockAccount(accountId: string): Promise<Account | null>;
  /**
   * A deposit removed with its user, with its reversals and the losses booked on it, locked until commit so that
   * two refunds or disputes of it take turns; null when no deposit with this id was removed.
   */
  lockRemovedDeposit(depositId: string): Promise<RemovedDeposit | null>;
  /**
   * Books a removed user's deposit taken back by the provider against the platform loss account (see lossOf);
   * null, booking nothing, when a loss with its key was booked for the deposit already.
   */
  bookPlatformLoss(loss: NewPlatformLoss): Promise<PlatformLoss | null>;
  /** Remembers the provider's refunded total for a deposit, unless a higher one is remembered already. */
  reportRefundedTotal(depositId: string, refundedTotal: MinorUnits, reference: string): Promise<void>;
  /** The highest refunded total the provider reported for a deposit, with that report's reference. */
  reportedRefundOf(depositId: string): Promise<{ refundedTotal: MinorUnits; reference: string } | null>;
  /** Moves `amount` from available to held; false when the account has not that much available. */
  holdFunds(accountId: string, amount: MinorUnits): Promise<boolean>;
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
  const journal = createJournal(trx, systemAccounts);
  return {
    ...settlementUnitOf(trx, systemAccounts),

    async lockAccount(accountId) {
      const row: AccountRow | undefined = await trx('accounts')
        .where({ id: accountId })
        .whereRaw(USER_ACCOUNT)
        .first(ACCOUNT_COLUMNS)
        .forNoKeyUpdate();
      return row ? toAccount(row) : null;
    },

    async lockRemovedDeposit(depositId) {
      // An advisory lock, not the row's: the tombstone itself never changes.
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `ledger-removed-deposit:${depositId}`,
      ]);
      return (await findRemovedDeposits(trx, [depositId])).get(depositId) ?? null;
    },

    async bookPlatformLoss(loss) {
      const booked = await insertPlatformLoss(trx, loss);
      if (booked) await journal.book([{ transactionId: booked.id, settlement: lossOf(booked) }], []);
      return booked;
    },

    async reportRefundedTotal(depositId, refundedTotal, reference) {
      await trx.raw(
        `INSERT INTO refund_reports (deposit_id, refunded_total, reference) VALUES (?, ?, ?)
         ON CONFLICT (deposit_id) DO UPDATE
         SET refunded_total = EXCLUDED.refunded_total, reference = EXCLUDED.reference, reported_at = now()
         WHERE refund_reports.refunded_total < EXCLUDED.refunded_total`,
        [depositId, refundedTotal.toString(), reference],
      );
    },

    async reportedRefundOf(depositId) {
      const row: { refunded_total: string; reference: string } | undefined = await trx('refund_reports')
        .where({ deposit_id: depositId })
        .first('refunded_total', 'reference');
      return row
        ? { refundedTotal: toMinorUnits(BigInt(row.refunded_total)), reference: row.reference }
        : null;
    },

    async holdFunds(accountId, amount) {
      const updated = await trx('accounts')
        .where({ id: accountId })
        .whereRaw(USER_ACCOUNT)
        .where('available_balance', '>=', amount.toString())
        .update({
          available_balance: trx.raw('available_balance - ?', [amount.toString()]),
          updated_at: trx.fn.now(),
        });
      return updated === 1;
    },

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
