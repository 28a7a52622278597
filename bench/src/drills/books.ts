import { catalogueEntries } from '@payments/currency';
import { createHttpClient } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import type { DrillContext, DrillReport } from './drill-context.js';

type Check = DrillReport['checks'][number];

/** What the book checks read: the ledger's database and its service port. */
export type BooksContext = Pick<DrillContext, 'target' | 'ledgerDb'>;

export interface BookScope {
  /** The accounts the drill used; its transactions are the ones on them. */
  accountIds: readonly string[];
  /** What their balances must add up to, from what the drill itself deposited (minor units). */
  expectedTotalMinor?: bigint;
  /** Deposits whose confirmation webhook was answered 200. */
  confirmed?: ReadonlySet<string>;
  /** True when every confirmation sent was a success, so each confirmed deposit must be completed. */
  confirmationsAllSucceed?: boolean;
}

interface AuditAnswer {
  ok: boolean;
  counts: { accounts: number; transactions: number; entries: number };
  unbalanced_transactions: unknown[];
  balance_mismatches: unknown[];
  invalid_balances: unknown[];
  hold_mismatches: unknown[];
  misbooked_transactions: unknown[];
  history_count_mismatches: unknown[];
  misbooked_losses: unknown[];
}

const usd = (minor: bigint) => {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  return `${sign}${(abs / 100n).toLocaleString('en-US')}.${(abs % 100n).toString().padStart(2, '0')}`;
};

export { usd as formatUsd };

const exponents = new Map(catalogueEntries.map((entry) => [entry.code, entry.minor_units]));

/** Minor units of any currency as a decimal (JPY has none, KWD three). */
function formatMinor(currency: string, minor: bigint): string {
  const exponent = exponents.get(currency) ?? 2;
  if (exponent === 2) return usd(minor);
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  const unit = 10n ** BigInt(exponent);
  const fraction = exponent > 0 ? `.${(abs % unit).toString().padStart(exponent, '0')}` : '';
  return `${sign}${(abs / unit).toLocaleString('en-US')}${fraction}`;
}

/** Waits until no transaction on the accounts is pending; resolves with how many still are. */
export async function waitSettled(
  context: BooksContext,
  accountIds: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await context.ledgerDb.pool.query<{ count: string }>(
      `SELECT count(*) FROM transactions WHERE status = 'pending' AND account_id = ANY($1::uuid[])`,
      [accountIds],
    );
    const pending = Number(rows[0]?.count ?? 0);
    if (pending === 0 || Date.now() > deadline) return pending;
    await sleep(200);
  }
}

/**
 * The ledger audit and the checks that money was neither made nor lost: the books balance, total money equals
 * deposits − withdrawals − fees − reversals, what the provider took back from deleted users is the platform loss
 * accounts' and nothing else is, no balance is negative but by a reversal, every accepted transaction finished,
 * and every effect (a credit, a settled transfer, a reversal, a confirmed webhook) happened exactly once.
 */
export async function checkBooks(context: BooksContext, scope: BookScope): Promise<Check[]> {
  const checks: Check[] = [];
  const pool = context.ledgerDb.pool;
  // Raw: the ledger's internal audit route (service token), not an API operation the client covers.
  const client = createHttpClient(context.target.ledgerUrl, 1, 60_000);
  try {
    const audit = await client.json<AuditAnswer>({
      method: 'GET',
      path: '/internal/audit',
      token: context.target.serviceToken,
    });
    const found =
      audit.unbalanced_transactions.length +
      audit.balance_mismatches.length +
      audit.invalid_balances.length +
      audit.hold_mismatches.length +
      audit.misbooked_transactions.length +
      audit.history_count_mismatches.length +
      audit.misbooked_losses.length;
    checks.push({
      name: 'ledger audit (/internal/audit)',
      ok: audit.ok,
      detail: `${audit.ok ? 'ok' : 'FAILED'}: ${audit.counts.transactions} transactions, ${audit.counts.entries} entries; entries balance, balances = entries, holds = pending, history counts = rows, loss accounts = losses`,
      discrepancies: audit.ok ? 0 : Math.max(found, 1),
    });
  } finally {
    client.close();
  }

  const { rows: money } = await pool.query<{ currency: string; balances: string; expected: string }>(
    // Only sides on accounts that still exist: a deleted user's history leaves with them (its entries stay).
    `WITH live AS (SELECT id FROM accounts WHERE kind = 'user'),
     moves AS (
       SELECT currency, CASE type
                          WHEN 'deposit' THEN amount - fee
                          WHEN 'reversal' THEN -(amount - fee)
                          ELSE -(amount + fee)
                        END AS delta
       FROM transactions WHERE status = 'completed' AND account_id IN (SELECT id FROM live)
       UNION ALL
       SELECT coalesce(converted_currency, currency), coalesce(converted_amount, amount)
       FROM transactions
       WHERE status = 'completed' AND type = 'transfer' AND counterparty_account_id IN (SELECT id FROM live)
     ), expected AS (SELECT currency, sum(delta) AS expected FROM moves GROUP BY currency),
     balances AS (SELECT currency, sum(balance) AS balances FROM accounts WHERE kind = 'user' GROUP BY currency)
     SELECT coalesce(b.currency, e.currency) AS currency, coalesce(b.balances, 0) AS balances,
            coalesce(e.expected, 0) AS expected
     FROM balances b FULL JOIN expected e ON e.currency = b.currency`,
  );
  const off = money.filter((row) => BigInt(row.balances) !== BigInt(row.expected));
  checks.push({
    name: 'total money = deposits − withdrawals − fees',
    ok: off.length === 0,
    detail: money
      .map(
        (row) =>
          `${row.currency} ${formatMinor(row.currency, BigInt(row.balances))} held vs ${formatMinor(row.currency, BigInt(row.expected))} booked`,
      )
      .join('; '),
    discrepancies: off.length,
  });

  checks.push(await platformLossesCheck(pool));

  // Only a reversal (the provider took back money already spent) may take an account below zero.
  const { rows: negative } = await pool.query<{ below: string; unexplained: string }>(
    `SELECT count(*) AS below,
            count(*) FILTER (WHERE NOT EXISTS (
              SELECT 1 FROM transactions t
              WHERE t.account_id = a.id AND t.type = 'reversal' AND t.status = 'completed'
            )) AS unexplained
     FROM accounts a WHERE kind = 'user' AND (balance < 0 OR available_balance < 0)`,
  );
  const below = Number(negative[0]?.below ?? 0);
  const unexplained = Number(negative[0]?.unexplained ?? 0);
  checks.push({
    name: 'no balance below zero but by a reversal',
    ok: unexplained === 0,
    detail: `${below} user accounts below zero, ${unexplained} of them without a reversal that took them there`,
    discrepancies: unexplained,
  });

  const { rows: transactions } = await pool.query<{
    id: string;
    type: string;
    status: string;
    amount: string;
    age_seconds: string;
    user_entries: string;
  }>(
    `SELECT t.id, t.type, t.status, t.amount, round(extract(epoch FROM now() - t.created_at)) AS age_seconds,
            count(e.id) FILTER (WHERE e.account_id IN (t.account_id, t.counterparty_account_id)) AS user_entries
     FROM transactions t LEFT JOIN entries e ON e.transaction_id = t.id
     WHERE t.account_id = ANY($1::uuid[])
     GROUP BY t.id`,
    [scope.accountIds],
  );
  const pending = transactions.filter((t) => t.status === 'pending');
  checks.push({
    name: 'every accepted transaction terminal after the settle period',
    ok: pending.length === 0,
    detail:
      `${transactions.length} transactions on the drill's accounts, ${pending.length} still pending` +
      // Which, for whoever reads a failed run: type, id and how long ago it was accepted.
      pending
        .slice(0, 5)
        .map((t) => `; ${t.type} ${t.id} accepted ${t.age_seconds} s ago`)
        .join(''),
    discrepancies: pending.length,
  });
  const wrongEffects = transactions.filter((t) => {
    const expected = t.status === 'completed' ? (t.type === 'transfer' ? 2 : 1) : 0;
    return Number(t.user_entries) !== expected;
  });
  checks.push({
    name: 'each transaction took effect exactly once',
    ok: wrongEffects.length === 0,
    detail: `${wrongEffects.length} with a missing or repeated booking on a user account`,
    discrepancies: wrongEffects.length,
  });

  if (scope.confirmed) {
    const byId = new Map(transactions.map((t) => [t.id, t]));
    const notApplied = [...scope.confirmed].filter((id) => {
      const status = byId.get(id)?.status;
      return scope.confirmationsAllSucceed
        ? status !== 'completed'
        : status !== 'completed' && status !== 'failed';
    });
    checks.push({
      name: 'every webhook answered 200 took effect',
      ok: notApplied.length === 0,
      detail: `${scope.confirmed.size} deposits confirmed with a 200, ${notApplied.length} without their effect`,
      discrepancies: notApplied.length,
    });
  }

  if (scope.expectedTotalMinor !== undefined) {
    const { rows } = await pool.query<{ total: string | null }>(
      `SELECT sum(balance) AS total FROM accounts WHERE id = ANY($1::uuid[])`,
      [scope.accountIds],
    );
    const total = BigInt(rows[0]?.total ?? 0);
    checks.push({
      name: "drill's accounts hold what the drill put in",
      ok: total === scope.expectedTotalMinor,
      detail: `${usd(total)} USD held, ${usd(scope.expectedTotalMinor)} expected`,
      discrepancies: total === scope.expectedTotalMinor ? 0 : 1,
    });
  }
  return checks;
}

/**
 * Money a deleted user's deposit lost to a refund or dispute left the users' side of the books with them: it is
 * the platform's loss. Per currency the platform loss account holds exactly the losses booked (amount less the fee
 * share fee revenue gave back), each on a deposit removed with its user, and no deposit lost more than it credited
 * (its reversals before the removal counted).
 */
async function platformLossesCheck(pool: BooksContext['ledgerDb']['pool']): Promise<Check> {
  const { rows: currencies } = await pool.query<{
    currency: string;
    count: string;
    lost: string;
    held: string;
  }>(
    `WITH booked AS (
       SELECT currency, count(*) AS count, sum(amount - fee) AS lost FROM platform_losses GROUP BY currency
     ), accounts AS (
       SELECT currency, -balance AS held FROM accounts WHERE kind = 'system' AND system_code = 'platform_loss'
     )
     SELECT currency, coalesce(b.count, 0) AS count, coalesce(b.lost, 0) AS lost, coalesce(a.held, 0) AS held
     FROM booked b FULL JOIN accounts a USING (currency) ORDER BY currency`,
  );
  const { rows: astray } = await pool.query<{ astray: string; beyond: string }>(
    `SELECT count(*) FILTER (WHERE r.deposit_id IS NULL OR t.id IS NOT NULL) AS astray,
            count(*) FILTER (WHERE r.amount < coalesce(l.taken, 0) + coalesce((
              SELECT sum((x ->> 'amount')::bigint) FROM jsonb_array_elements(r.reversals) x
              WHERE x ->> 'status' = 'completed' AND x ->> 'reversal_reason' IN ('refund', 'dispute')
            ), 0)) AS beyond
     FROM (SELECT deposit_id, sum(amount) AS taken FROM platform_losses GROUP BY deposit_id) l
     LEFT JOIN removed_deposits r ON r.deposit_id = l.deposit_id
     LEFT JOIN transactions t ON t.id = l.deposit_id`,
  );
  const off = currencies.filter((row) => BigInt(row.lost) !== BigInt(row.held));
  const notRemoved = Number(astray[0]?.astray ?? 0);
  const beyond = Number(astray[0]?.beyond ?? 0);
  const losses = currencies.reduce((sum, row) => sum + Number(row.count), 0);
  return {
    name: "platform losses = the loss accounts, each on a deleted user's deposit, never beyond it",
    ok: off.length + notRemoved + beyond === 0,
    detail:
      `${losses} refunds or lost disputes of deleted users' deposits booked` +
      currencies
        .map((row) => `; ${row.currency} ${formatMinor(row.currency, BigInt(row.lost))} lost`)
        .join('') +
      off
        .map(
          (row) => ` (the ${row.currency} loss account holds ${formatMinor(row.currency, BigInt(row.held))})`,
        )
        .join('') +
      `; ${notRemoved} on no deleted user's deposit, ${beyond} deposits taken back beyond what they credited`,
    discrepancies: off.length + notRemoved + beyond,
  };
}

/** Webhook events recorded but never published: a 200 must never leave one behind. */
export async function unpublishedWebhooks(context: DrillContext): Promise<number> {
  const { rows } = await context.webhookDb.query<{ count: string }>(
    `SELECT count(*) FROM webhook_events WHERE published_at IS NULL AND outcome <> 'ignored'`,
  );
  return Number(rows[0]?.count ?? 0);
}
