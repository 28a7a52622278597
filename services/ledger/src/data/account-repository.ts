import { enqueueEvents, type Knex } from '@payments/service-kit';
import type { AccountStore, AccountUnit } from '../use-cases/accounts.js';
import { readPage } from './pages.js';
import { keepRemovedDeposits } from './platform-losses.js';
import { ACCOUNT_COLUMNS, toAccount, USER_ACCOUNT, type AccountRow } from './records.js';
import { unitOfWork } from './unit-of-work.js';

/** The advisory lock that serialises a user's account creation and removal. */
async function lockUser(trx: Knex.Transaction, userId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`ledger-user:${userId}`]);
}

function accountUnitOf(trx: Knex.Transaction): AccountUnit {
  return {
    lockUser: (userId) => lockUser(trx, userId),

    async isRemovedUser(userId) {
      return (await trx('removed_users').where({ user_id: userId }).first('user_id')) !== undefined;
    },

    async countAccounts(userId) {
      const row = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .count<{ count: string }[]>('*');
      return Number(row[0]?.count ?? 0);
    },

    async insertAccount(account) {
      const rows: AccountRow[] = await trx('accounts')
        .insert({
          id: account.id,
          user_id: account.userId,
          kind: 'user',
          currency: account.currency,
          metadata: JSON.stringify(account.metadata),
        })
        .returning(ACCOUNT_COLUMNS);
      return toAccount(rows[0] as AccountRow);
    },

    enqueue: (events) => enqueueEvents(trx, events),

    async lockHoldings(userId) {
      // The lock account creation takes, then transactions before accounts: the order settlements lock in.
      await lockUser(trx, userId);
      await trx('transactions')
        .where({ user_id: userId, status: 'pending' })
        .orderBy('id')
        .forUpdate()
        .select('id');
      const accounts = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .orderBy('id')
        .forUpdate()
        .select<AccountRow[]>(ACCOUNT_COLUMNS);
      // Nothing new can be accepted on locked accounts; a fresh read sees everything accepted before.
      const accountIds = accounts.map((account) => account.id);
      const [pending] = await trx('transactions')
        .where({ user_id: userId, status: 'pending' })
        .select<{ pending: string; flagged: string }[]>(
          trx.raw('count(*) AS pending'),
          trx.raw('count(reconciliation_required_at) AS flagged'),
        );
      const [incoming] =
        accountIds.length === 0
          ? [{ count: '0' }]
          : await trx('transactions')
              .whereIn('counterparty_account_id', accountIds)
              .where('status', 'pending')
              .whereNot('user_id', userId)
              .count<{ count: string }[]>('*');
      return {
        accounts: accounts.map(toAccount),
        pending: Number(pending?.pending ?? 0),
        awaitingReconciliation: Number(pending?.flagged ?? 0),
        incoming: Number(incoming?.count ?? 0),
      };
    },

    async removeUser(userId) {
      // A completed transfer with another user is part of their history too: it stays, without this user.
      const shared = (query: Knex.QueryBuilder) => {
        query
          .where({ type: 'transfer', status: 'completed' })
          .whereNotNull('counterparty_user_id')
          .whereNot('counterparty_user_id', userId);
      };
      // What the provider made for them stays in its records: reconciliation knows these left with their user, and
      // a refund or dispute of a deposit coming later is the platform's loss, decided from what is kept of it.
      await keepRemovedDeposits(trx, userId);
      await trx.raw(
        `INSERT INTO removed_transactions (transaction_id)
         SELECT id FROM transactions WHERE user_id = ? AND type IN ('deposit', 'withdrawal')
         ON CONFLICT DO NOTHING`,
        [userId],
      );
      const transactions = await trx('transactions').where({ user_id: userId }).whereNot(shared).delete();
      // What lives on is the receiver's: the removed owner's own fields go with them.
      await trx('transactions')
        .where({ user_id: userId })
        .update({ user_id: null, metadata: trx.raw(`'{}'::jsonb`), reference: null });
      await trx('transactions')
        .where({ counterparty_user_id: userId })
        .update({ counterparty_user_id: null });
      await trx('idempotency_keys').where({ user_id: userId }).delete();
      await trx('transaction_references').where({ user_id: userId }).delete();
      await trx('payout_accounts').where({ user_id: userId }).delete();
      const accounts = await trx('accounts').where({ user_id: userId, kind: 'user' }).delete();
      await trx('removed_users').insert({ user_id: userId }).onConflict('user_id').ignore();
      return { accounts, transactions };
    },
  };
}

export function createAccountRepository(knex: Knex): AccountStore {
  return {
    ...unitOfWork(knex, accountUnitOf),

    async findUserAccount(accountId) {
      const row: AccountRow | undefined = await knex('accounts')
        .where({ id: accountId })
        .whereRaw(USER_ACCOUNT)
        .first(ACCOUNT_COLUMNS);
      return row ? toAccount(row) : null;
    },

    listUserAccounts: (userId, page) =>
      readPage(knex, () => knex('accounts').where({ user_id: userId, kind: 'user' }), page, {
        columns: ACCOUNT_COLUMNS,
        order: [{ column: 'created_at' }, { column: 'id' }],
        toItem: toAccount,
      }),
  };
}
