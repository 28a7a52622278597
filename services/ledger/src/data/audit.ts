import type { Knex } from '@payments/service-kit';
import type { AuditReport, HistoryCountMismatch } from '../use-cases/maintenance.js';

const SAMPLE = 100;

/** Counts each owner's history the way listTransactions filters it, apart from how the triggers derive it. */
async function findHistoryCountMismatches(knex: Knex): Promise<HistoryCountMismatch[]> {
  const { rows } = await knex.raw<{
    rows: {
      owner_kind: HistoryCountMismatch['ownerKind'];
      owner_id: string;
      direction: HistoryCountMismatch['direction'];
      type: string;
      status: string;
      counted: string;
      actual: string;
    }[];
  }>(
    `WITH actual AS (
       SELECT 'user' AS owner_kind, user_id AS owner_id, 'sent' AS direction, type, status, count(*) AS n
       FROM transactions WHERE user_id IS NOT NULL GROUP BY user_id, type, status
       UNION ALL
       SELECT 'account', account_id, 'sent', type, status, count(*)
       FROM transactions GROUP BY account_id, type, status
       UNION ALL
       SELECT 'user', counterparty_user_id, 'received', type, status, count(*)
       FROM transactions
       WHERE type = 'transfer' AND status = 'completed' AND counterparty_user_id IS NOT NULL
         AND (user_id <> counterparty_user_id OR user_id IS NULL)
       GROUP BY counterparty_user_id, type, status
       UNION ALL
       SELECT 'account', counterparty_account_id, 'received', type, status, count(*)
       FROM transactions
       WHERE type = 'transfer' AND status = 'completed' AND account_id <> counterparty_account_id
       GROUP BY counterparty_account_id, type, status
     ), counted AS (
       SELECT owner_kind, owner_id, direction, type, status, sum(n) AS n
       FROM (
         SELECT owner_kind, owner_id, direction, type, status, count AS n FROM history_counts
         UNION ALL
         SELECT owner_kind, owner_id, direction, type, status, delta FROM history_count_deltas
       ) kept
       GROUP BY owner_kind, owner_id, direction, type, status
     )
     SELECT owner_kind, owner_id, direction, type, status,
            coalesce(counted.n, 0) AS counted, coalesce(actual.n, 0) AS actual
     FROM counted FULL JOIN actual USING (owner_kind, owner_id, direction, type, status)
     WHERE coalesce(counted.n, 0) <> coalesce(actual.n, 0)
     LIMIT ?`,
    [SAMPLE],
  );
  return rows.map((r) => ({
    ownerKind: r.owner_kind,
    ownerId: r.owner_id,
    direction: r.direction,
    type: r.type,
    status: r.status,
    counted: Number(r.counted),
    actual: Number(r.actual),
  }));
}

/** The platform's losses per currency, and any that the platform loss accounts do not hold exactly. */
async function auditPlatformLosses(
  knex: Knex,
): Promise<Pick<AuditReport, 'platformLosses' | 'misbookedLosses'>> {
  const [totals, misbooked] = await Promise.all([
    knex.raw<{ rows: { currency: string; count: string; amount: string; loss: string }[] }>(
      `SELECT currency, count(*) AS count, sum(amount) AS amount, sum(amount - fee) AS loss
       FROM platform_losses GROUP BY currency ORDER BY currency`,
    ),
    // A loss of amount − fee debits its currency's loss account by exactly that; nothing else moves it.
    knex.raw<{ rows: { transaction_id: string; expected: string; entries: string }[] }>(
      `WITH booked AS (
         SELECT e.transaction_id, sum(e.amount) AS total FROM entries e
         JOIN accounts a ON a.id = e.account_id AND a.kind = 'system' AND a.system_code = 'platform_loss'
         GROUP BY e.transaction_id
       )
       SELECT coalesce(l.id, b.transaction_id) AS transaction_id,
              -coalesce(l.amount - l.fee, 0) AS expected, coalesce(b.total, 0) AS entries
       FROM platform_losses l FULL JOIN booked b ON b.transaction_id = l.id
       WHERE coalesce(b.total, 0) <> -coalesce(l.amount - l.fee, 0) LIMIT ?`,
      [SAMPLE],
    ),
  ]);
  return {
    platformLosses: totals.rows.map((r) => ({
      currency: r.currency,
      count: Number(r.count),
      amount: BigInt(r.amount),
      loss: BigInt(r.loss),
    })),
    misbookedLosses: misbooked.rows.map((r) => ({
      transactionId: r.transaction_id,
      expected: BigInt(r.expected),
      entries: BigInt(r.entries),
    })),
  };
}

/**
 * Checks the books: double entry balances, balances match the journal, holds match pending transactions, the
 * history counters match the transactions, and the platform loss accounts hold exactly the losses booked.
 * Accounts overdrawn by reversals and the platform's losses are reported, and do not fail it.
 */
export async function runAudit(knex: Knex): Promise<AuditReport> {
  const [unbalanced, mismatched, invalid, holds, misbooked, histories, counts, system, overdrawn, losses] =
    await Promise.all([
      knex.raw<{ rows: { transaction_id: string; currency: string; sum: string }[] }>(
        `SELECT transaction_id, currency, sum(amount) AS sum FROM entries
       GROUP BY transaction_id, currency HAVING sum(amount) <> 0 LIMIT ?`,
        [SAMPLE],
      ),
      knex.raw<{ rows: { id: string; balance: string; entries: string }[] }>(
        `SELECT a.id, a.balance, coalesce(e.total, 0) AS entries
       FROM accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS total FROM entries GROUP BY account_id) e ON e.account_id = a.id
       WHERE a.balance <> coalesce(e.total, 0) LIMIT ?`,
        [SAMPLE],
      ),
      knex.raw<{ rows: { id: string; balance: string; available_balance: string }[] }>(
        `SELECT id, balance, available_balance FROM accounts
       WHERE kind = 'user' AND (
         NOT (available_balance <= balance AND available_balance >= -reversal_shortfall)
         OR (available_balance < 0 AND NOT EXISTS (
           SELECT 1 FROM transactions t
           WHERE t.account_id = accounts.id AND t.type = 'reversal' AND t.status = 'completed'
         ))
       ) LIMIT ?`,
        [SAMPLE],
      ),
      knex.raw<{ rows: { id: string; held: string; pending: string }[] }>(
        `SELECT a.id, a.balance - a.available_balance AS held, coalesce(p.total, 0) AS pending
       FROM accounts a
       LEFT JOIN (
         SELECT account_id, sum(CASE type WHEN 'reversal' THEN held_amount ELSE amount + fee END) AS total
         FROM transactions
         WHERE status = 'pending' AND type IN ('withdrawal', 'transfer', 'reversal') GROUP BY account_id
       ) p ON p.account_id = a.id
       WHERE a.kind = 'user' AND a.balance - a.available_balance <> coalesce(p.total, 0) LIMIT ?`,
        [SAMPLE],
      ),
      knex.raw<{ rows: { id: string; status: string; entries: string }[] }>(
        `SELECT t.id, t.status, count(e.id) AS entries
       FROM transactions t LEFT JOIN entries e ON e.transaction_id = t.id
       GROUP BY t.id, t.status
       HAVING (t.status = 'completed') <> (count(e.id) > 0) LIMIT ?`,
        [SAMPLE],
      ),
      findHistoryCountMismatches(knex),
      knex.raw<{ rows: { accounts: string; transactions: string; entries: string }[] }>(
        `SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM transactions) AS transactions,
              (SELECT count(*) FROM entries) AS entries`,
      ),
      knex('accounts')
        .where('kind', 'system')
        .orderBy(['system_code', 'currency'])
        .select<{ system_code: string; currency: string; balance: string }[]>(
          'system_code',
          'currency',
          'balance',
        ),
      knex.raw<{ rows: { id: string; balance: string; available_balance: string }[] }>(
        `SELECT id, balance, available_balance FROM accounts
       WHERE kind = 'user' AND available_balance < 0 ORDER BY available_balance, id LIMIT ?`,
        [SAMPLE],
      ),
      auditPlatformLosses(knex),
    ]);
  const total = counts.rows[0];
  const report: AuditReport = {
    ok: false,
    checkedAt: new Date(),
    counts: {
      accounts: Number(total?.accounts ?? 0),
      transactions: Number(total?.transactions ?? 0),
      entries: Number(total?.entries ?? 0),
    },
    systemBalances: system.map((r) => ({
      code: r.system_code,
      currency: r.currency,
      balance: BigInt(r.balance),
    })),
    unbalancedTransactions: unbalanced.rows.map((r) => ({
      transactionId: r.transaction_id,
      currency: r.currency,
      sum: BigInt(r.sum),
    })),
    balanceMismatches: mismatched.rows.map((r) => ({
      accountId: r.id,
      balance: BigInt(r.balance),
      entries: BigInt(r.entries),
    })),
    invalidBalances: invalid.rows.map((r) => ({
      accountId: r.id,
      balance: BigInt(r.balance),
      availableBalance: BigInt(r.available_balance),
    })),
    overdrawnAccounts: overdrawn.rows.map((r) => ({
      accountId: r.id,
      balance: BigInt(r.balance),
      availableBalance: BigInt(r.available_balance),
    })),
    holdMismatches: holds.rows.map((r) => ({
      accountId: r.id,
      held: BigInt(r.held),
      pending: BigInt(r.pending),
    })),
    misbookedTransactions: misbooked.rows.map((r) => ({
      transactionId: r.id,
      status: r.status,
      entries: Number(r.entries),
    })),
    historyCountMismatches: histories,
    ...losses,
  };
  report.ok =
    report.unbalancedTransactions.length === 0 &&
    report.balanceMismatches.length === 0 &&
    report.invalidBalances.length === 0 &&
    report.holdMismatches.length === 0 &&
    report.misbookedTransactions.length === 0 &&
    report.historyCountMismatches.length === 0 &&
    report.misbookedLosses.length === 0;
  return report;
}
