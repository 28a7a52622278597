import { toMinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import { sumsFromLatest, type StatementEntry, type StatementPeriod } from '../domain/statement.js';
import type { StatementPageRequest, StatementSlice, StatementStore } from '../use-cases/statements.js';

interface EntryRow {
  id: string;
  transaction_id: string;
  amount: string;
  created_at: Date;
  type: string | null;
  counterparty_account_id: string | null;
  own: boolean | null;
  reference: string | null;
  metadata: Record<string, string> | null;
}

const sumOf = (value: string | null) => toMinorUnits(value ?? '0');

/**
 * Every figure comes from one REPEATABLE READ snapshot of the journal and the account, so opening + entries =
 * closing even while money moves. Entries are ordered by (created_at, id); every query here is a range of the
 * entries_account_created index. Resolves null when `startingAfter` is not an entry of this statement.
 */
async function readStatement(
  knex: Knex,
  accountId: string,
  period: StatementPeriod,
  page: StatementPageRequest,
  now: Date = new Date(),
): Promise<StatementSlice | null> {
  return knex.transaction(
    async (trx) => {
      // The cursor's position is compared inside SQL: created_at has microseconds a JS Date would drop.
      const cursor = page.startingAfter
        ? await trx('entries')
            .where({ id: page.startingAfter, account_id: accountId })
            .where('created_at', '>=', period.from)
            .where('created_at', '<', period.to)
            .first<{ id: string } | undefined>('id')
        : undefined;
      if (page.startingAfter && !cursor) return null;
      const position = cursor
        ? trx.raw('(SELECT created_at, id FROM entries WHERE id = ?)', [cursor.id])
        : null;

      const { opening, closing } = await edgeBalances(trx, accountId, period, now);
      const beforePage = position
        ? await trx('entries')
            .where('account_id', accountId)
            .where('created_at', '>=', period.from)
            .whereRaw('(created_at, id) <= ?', [position])
            .first<{ sum: string | null }>(trx.raw('sum(amount) AS sum'))
        : undefined;

      const rows: EntryRow[] = await trx('entries as e')
        .leftJoin('transactions as t', 't.id', 'e.transaction_id')
        .join('accounts as a', 'a.id', 'e.account_id')
        .where('e.account_id', accountId)
        .where('e.created_at', '>=', period.from)
        .where('e.created_at', '<', period.to)
        .modify((query) => {
          if (position) query.whereRaw('(e.created_at, e.id) > ?', [position]);
        })
        .orderBy([{ column: 'e.created_at' }, { column: 'e.id' }])
        .limit(page.limit + 1)
        .select(
          'e.id',
          'e.transaction_id',
          'e.amount',
          'e.created_at',
          't.type',
          // The other side of a transfer: the destination for its sender, the sender for its destination.
          trx.raw(
            'CASE WHEN t.account_id = e.account_id THEN t.counterparty_account_id ELSE t.account_id END AS counterparty_account_id',
          ),
          // The owner's own fields only on the account owner's own transactions, never on one received.
          trx.raw('t.user_id = a.user_id AS own'),
          't.reference',
          't.metadata',
        );

      return {
        opening,
        closing,
        pageStart: opening + sumOf(beforePage?.sum ?? null),
        entries: rows.slice(0, page.limit).map(toStatementEntry),
        hasMore: rows.length > page.limit,
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** The balances at `from` and `to`, summed from whichever end of the journal is nearer (see sumsFromLatest). */
async function edgeBalances(
  trx: Knex,
  accountId: string,
  period: StatementPeriod,
  now: Date,
): Promise<{ opening: bigint; closing: bigint }> {
  const account = await trx('accounts')
    .where({ id: accountId })
    .first<{ balance: string; created_at: Date } | undefined>('balance', 'created_at');
  if (account && sumsFromLatest(period, account.created_at, now)) {
    const since = await trx('entries')
      .where('account_id', accountId)
      .where('created_at', '>=', period.from)
      .first<{ since_from: string | null; since_to: string | null }>(
        trx.raw('sum(amount) AS since_from'),
        trx.raw('sum(amount) FILTER (WHERE created_at >= ?) AS since_to', [period.to]),
      );
    const balance = toMinorUnits(account.balance);
    return {
      opening: balance - sumOf(since?.since_from ?? null),
      closing: balance - sumOf(since?.since_to ?? null),
    };
  }
  const before = await trx('entries')
    .where('account_id', accountId)
    .where('created_at', '<', period.to)
    .first<{ opening: string | null; closing: string | null }>(
      trx.raw('sum(amount) FILTER (WHERE created_at < ?) AS opening', [period.from]),
      trx.raw('sum(amount) AS closing'),
    );
  return { opening: sumOf(before?.opening ?? null), closing: sumOf(before?.closing ?? null) };
}

/** The balance at `at`: the balance at the edge of the empty period [at, at), from one snapshot. */
async function balanceAt(knex: Knex, accountId: string, at: Date, now: Date = new Date()): Promise<bigint> {
  return knex.transaction(
    async (trx) => (await edgeBalances(trx, accountId, { from: at, to: at }, now)).opening,
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

function toStatementEntry(row: EntryRow): StatementEntry {
  return {
    id: String(row.id),
    transactionId: row.transaction_id,
    type: row.type,
    counterpartyAccountId: row.counterparty_account_id,
    amount: toMinorUnits(row.amount),
    createdAt: row.created_at,
    own: row.own === true ? { reference: row.reference, metadata: row.metadata ?? {} } : null,
  };
}

export function createStatementRepository(knex: Knex): StatementStore {
  return {
    readStatement: (accountId, period, page) => readStatement(knex, accountId, period, page),
    balanceAt: (accountId, at) => balanceAt(knex, accountId, at),
  };
}
