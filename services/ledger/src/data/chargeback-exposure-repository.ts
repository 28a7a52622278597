import { toMinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { ExposureStore } from '../use-cases/chargeback-exposure.js';

/**
 * Per account: its card deposits (those the ledger asked the provider for) completed since the window's start, each
 * less what reversals (refunds, disputes) pending or completed took back of it, sum to D; the exposure is D less
 * what the account holds, between 0 and D. Exact integers throughout; read over transactions_completed_deposits.
 */
const PER_ACCOUNT = `
  WITH card_deposits AS (
    SELECT d.account_id,
           greatest(d.amount - coalesce((
             SELECT sum(r.amount) FROM transactions AS r
             WHERE r.type = 'reversal' AND r.original_transaction_id = d.id
               AND r.reversal_reason IN ('refund', 'dispute') AND r.status IN ('pending', 'completed')
           ), 0), 0) AS open_amount
    FROM transactions AS d
    JOIN provider_payments AS p ON p.transaction_id = d.id AND p.kind = 'payment'
    WHERE d.type = 'deposit' AND d.status = 'completed' AND d.completed_at >= :since
      AND d.user_id IS NOT NULL
  ), per_account AS (
    SELECT a.user_id, a.currency, sum(c.open_amount) AS deposits, a.balance
    FROM card_deposits AS c JOIN accounts AS a ON a.id = c.account_id AND a.kind = 'user'
    WHERE (CAST(:currency AS text) IS NULL OR a.currency = :currency)
    GROUP BY a.id, a.user_id, a.currency, a.balance
  ), per_user AS (
    SELECT user_id, currency,
           sum(least(deposits, greatest(deposits - greatest(balance, 0), 0))) AS exposure,
           sum(deposits) AS deposits, sum(balance) AS balance
    FROM per_account
    GROUP BY user_id, currency
  )`;

/** Amounts as text: a JSON number would lose a sum beyond 2^53 minor units. */
interface UserRow {
  user_id: string;
  currency: string;
  exposure: string;
  deposits: string;
  balance: string;
}
interface TotalRow {
  currency: string;
  exposure: string;
  exposed_users: number;
  deposits: string;
}

const minor = (value: string | number | null) => toMinorUnits(BigInt(value ?? 0));

export function createChargebackExposureRepository(knex: Knex): ExposureStore {
  return {
    async exposure({ since, limit, currency }) {
      // One statement, so that the users and the totals are read from one snapshot, and per_user computed once.
      const { rows } = await knex.raw<{ rows: { users: UserRow[]; totals: TotalRow[] }[] }>(
        `${PER_ACCOUNT}
         SELECT
           (SELECT coalesce(json_agg(json_build_object(
                     'user_id', user_id, 'currency', currency, 'exposure', exposure::text,
                     'deposits', deposits::text, 'balance', balance::text
                   ) ORDER BY exposure DESC, user_id, currency), '[]')
            FROM (SELECT * FROM per_user WHERE exposure > 0
                  ORDER BY exposure DESC, user_id, currency LIMIT :limit) AS u) AS users,
           (SELECT coalesce(json_agg(json_build_object(
                     'currency', currency, 'exposure', exposure::text, 'exposed_users', exposed_users,
                     'deposits', deposits::text
                   ) ORDER BY currency), '[]')
            FROM (SELECT currency, sum(exposure) AS exposure, count(*) FILTER (WHERE exposure > 0) AS exposed_users,
                         sum(deposits) AS deposits
                  FROM per_user GROUP BY currency) AS t) AS totals`,
        { since, currency: currency ?? null, limit: limit + 1 },
      );
      const { users, totals } = rows[0] ?? { users: [], totals: [] };
      return {
        users: users.map((row) => ({
          userId: row.user_id,
          currency: row.currency.trim(),
          exposure: minor(row.exposure),
          deposits: minor(row.deposits),
          balance: minor(row.balance),
        })),
        totals: totals.map((row) => ({
          currency: row.currency.trim(),
          exposure: minor(row.exposure),
          exposedUsers: Number(row.exposed_users),
          deposits: minor(row.deposits),
        })),
      };
    },
  };
}
