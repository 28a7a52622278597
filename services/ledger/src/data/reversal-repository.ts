import { toMinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import { lossOf } from '../domain/settlement.js';
import type { ReversalStore, ReversalUnit } from '../use-cases/reversals.js';
import { createJournal } from './journal.js';
import { readPage } from './pages.js';
import { findRemovedDeposits, insertPlatformLoss, toLoss, type PlatformLossRow } from './platform-losses.js';
import { ACCOUNT_COLUMNS, toAccount, USER_ACCOUNT, type AccountRow } from './records.js';
import { settlementUnitOf } from './settlement-repository.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { unitOfWork } from './unit-of-work.js';

/** Reversals' operations in the database transaction `trx`, settlement's among them. */
export function reversalUnitOf(trx: Knex.Transaction, systemAccounts: SystemAccounts): ReversalUnit {
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
  };
}

export function createReversalRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): ReversalStore {
  // Below zero implies a shortfall (the accounts_user_balances check): the partial index accounts_overdrawn.
  const overdrawn = () =>
    knex('accounts')
      .where('kind', 'user')
      .where('reversal_shortfall', '>', 0)
      .where('available_balance', '<', 0);

  return {
    ...unitOfWork(knex, (trx) => reversalUnitOf(trx, systemAccounts)),

    /** Furthest below zero first. */
    listOverdrawnAccounts: (page) =>
      readPage(knex, overdrawn, page, {
        columns: ACCOUNT_COLUMNS,
        order: [{ column: 'available_balance' }, { column: 'id' }],
        toItem: toAccount,
      }),

    async countOverdrawnAccounts() {
      const [count] = await overdrawn().count<{ count: string }[]>('*');
      return Number(count?.count ?? 0);
    },

    async overdrawnTotals() {
      const rows: { currency: string; accounts: string; overdrawn_by: string }[] = await overdrawn()
        .groupBy('currency')
        .orderBy('currency')
        .select(
          'currency',
          knex.raw('count(*) AS accounts'),
          knex.raw('-sum(available_balance) AS overdrawn_by'),
        );
      return rows.map((row) => ({
        currency: row.currency,
        accounts: Number(row.accounts),
        overdrawnBy: toMinorUnits(row.overdrawn_by),
      }));
    },

    async listPlatformLosses(limit) {
      const rows: PlatformLossRow[] = await knex('platform_losses')
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit)
        .select('*');
      return rows.map(toLoss);
    },

    async platformLossTotals() {
      const rows: { currency: string; count: string; amount: string; fee: string }[] = await knex(
        'platform_losses',
      )
        .groupBy('currency')
        .orderBy('currency')
        .select(
          'currency',
          knex.raw('count(*) AS count'),
          knex.raw('sum(amount) AS amount'),
          knex.raw('sum(fee) AS fee'),
        );
      return rows.map((row) => ({
        currency: row.currency,
        count: Number(row.count),
        amount: toMinorUnits(row.amount),
        fee: toMinorUnits(row.fee),
      }));
    },

    async countPlatformLosses() {
      const [row] = await knex('platform_losses').count<{ count: string }[]>('*');
      return Number(row?.count ?? 0);
    },
  };
}
