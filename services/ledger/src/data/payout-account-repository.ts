import type { Knex } from '@payments/service-kit';
import type { PayoutAccountStatus } from '../provider/payment-provider.js';
import type { PayoutAccount, PayoutAccountStore } from '../use-cases/payout-accounts.js';

interface PayoutAccountRow {
  provider: string;
  account: string;
  created_at: Date;
  payouts_enabled: boolean;
  currently_due: string[];
  disabled_reason: string | null;
  status_as_of: Date | null;
}

const COLUMNS = [
  'provider',
  'account',
  'created_at',
  'payouts_enabled',
  'currently_due',
  'disabled_reason',
  'status_as_of',
];

const statusOf = (row: PayoutAccountRow): PayoutAccountStatus => ({
  payoutsEnabled: row.payouts_enabled,
  currentlyDue: row.currently_due,
  disabledReason: row.disabled_reason,
});

const toAccount = (row: PayoutAccountRow): PayoutAccount & { asOf: Date | null } => ({
  provider: row.provider,
  account: row.account,
  createdAt: row.created_at,
  ...statusOf(row),
  asOf: row.status_as_of,
});

const statusColumns = (status: PayoutAccountStatus, asOf: Date) => ({
  payouts_enabled: status.payoutsEnabled,
  currently_due: status.currentlyDue,
  disabled_reason: status.disabledReason,
  status_as_of: asOf,
});

/**
 * Each user's connected account at the provider, as payout_accounts links them (one per user), with whether the
 * provider pays out to it and as of when (migration 029_payout_account_readiness).
 */
export function createPayoutAccountRepository(knex: Knex): PayoutAccountStore {
  const findPayoutAccount = async (userId: string) => {
    const row: PayoutAccountRow | undefined = await knex('payout_accounts')
      .where({ user_id: userId })
      .first(COLUMNS);
    return row ? toAccount(row) : null;
  };

  return {
    findPayoutAccount,

    async linkPayoutAccount(link) {
      const inserted: PayoutAccountRow[] = await knex('payout_accounts')
        .insert({
          user_id: link.userId,
          provider: link.provider,
          account: link.account,
          ...statusColumns(link.status, link.asOf),
        })
        .onConflict('user_id')
        .ignore()
        .returning(COLUMNS);
      if (inserted[0]) {
        const { asOf: _asOf, ...linked } = toAccount(inserted[0]);
        return { ...linked, created: true };
      }
      const existing = await findPayoutAccount(link.userId);
      if (!existing) throw new Error('a payout account vanished while it was linked');
      const { asOf: _asOf, ...linked } = existing;
      return { ...linked, created: false };
    },

    async replacementsOf(userId) {
      const row: { account: string; replaced_account: string | null; replacements: number } | undefined =
        await knex('payout_accounts')
          .where({ user_id: userId })
          .first('account', 'replaced_account', 'replacements');
      return row
        ? { account: row.account, replacedAccount: row.replaced_account, count: row.replacements }
        : null;
    },

    async hasPendingWithdrawal(userId) {
      const row = await knex('transactions')
        .where({ user_id: userId, type: 'withdrawal', status: 'pending' })
        .first(knex.raw('1 AS pending'));
      return row !== undefined;
    },

    async replacePayoutAccount({ userId, replaces, count, account, status, asOf }) {
      return knex.transaction(async (trx) => {
        // The row locked first: replacements of one user take turns, and the withdrawal check below is theirs.
        const current: { account: string } | undefined = await trx('payout_accounts')
          .where({ user_id: userId })
          .forUpdate()
          .first('account');
        if (!current || current.account !== replaces) return { outcome: 'changed' as const };
        const pending = await trx('transactions')
          .where({ user_id: userId, type: 'withdrawal', status: 'pending' })
          .first(trx.raw('1 AS pending'));
        if (pending) return { outcome: 'pending_withdrawal' as const };
        const [row]: PayoutAccountRow[] = await trx('payout_accounts')
          .where({ user_id: userId })
          .update({
            account,
            replaced_account: replaces,
            replacements: count,
            created_at: trx.fn.now(),
            ...statusColumns(status, asOf),
          })
          .returning(COLUMNS);
        if (!row) return { outcome: 'changed' as const };
        const { asOf: _asOf, ...linked } = toAccount(row);
        return { outcome: 'replaced' as const, linked };
      });
    },

    async applyReported({ account, status, asOf }) {
      return knex.transaction(async (trx) => {
        const row: PayoutAccountRow | undefined = await trx('payout_accounts')
          .where({ account })
          .forUpdate()
          .first(COLUMNS);
        if (!row) return null;
        const held = { ...statusOf(row), asOf: row.status_as_of };
        // Strictly newer only: an event of the same second may be older, and is settled by asking the provider.
        if (row.status_as_of !== null && row.status_as_of.getTime() >= asOf.getTime())
          return { applied: false, held };
        await trx('payout_accounts').where({ account }).update(statusColumns(status, asOf));
        return { applied: true, held };
      });
    },

    async recordFetched({ account, status, asOf, heldAsOf }) {
      const updated = await knex('payout_accounts')
        .where({ account })
        .andWhereRaw('status_as_of IS NOT DISTINCT FROM ?::timestamptz', [heldAsOf])
        .update({
          ...statusColumns(status, asOf),
          status_as_of: knex.raw('greatest(status_as_of, ?::timestamptz)', [asOf]),
        });
      return updated > 0;
    },

    async withdrawalCheck({ userId, accountId, hold, idempotencyKey, reference }) {
      const { rows } = await knex.raw<{
        rows: (PayoutAccountRow & { covered: boolean | null; claimed: boolean })[];
      }>(
        `SELECT p.account, p.payouts_enabled, p.currently_due, p.disabled_reason,
                (SELECT a.available_balance >= ?::bigint FROM accounts a
                 WHERE a.id = ?::uuid AND a.user_id = p.user_id) AS covered,
                (EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.user_id = p.user_id AND k.key = ?)
                 OR EXISTS (SELECT 1 FROM transaction_references r
                            WHERE r.user_id = p.user_id AND r.reference = ?)) AS claimed
         FROM payout_accounts p WHERE p.user_id = ?::uuid`,
        [hold.toString(), accountId, idempotencyKey, reference, userId],
      );
      const row = rows[0];
      if (!row) return null;
      return {
        account: row.account,
        ...statusOf(row),
        covered: row.covered === true,
        claimed: row.claimed,
      };
    },
  };
}
