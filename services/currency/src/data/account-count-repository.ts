import { processOnce, type Knex } from '@payments/service-kit';

export interface OpenedAccount {
  accountId: string;
  userId: string;
  currency: string;
}

export type EventOutcome = 'processed' | 'duplicate';

/** The ledger's accounts as this service learns of them from events, kept only to count them per currency. */
export interface AccountCountRepository {
  recordAccountOpened(eventId: string, account: OpenedAccount): Promise<EventOutcome>;
  forgetUser(eventId: string, userId: string): Promise<EventOutcome>;
  countByCurrency(): Promise<Record<string, number>>;
}

const CONSUMER = 'currency.account-counts';

export function createAccountCountRepository(knex: Knex): AccountCountRepository {
  return {
    recordAccountOpened: (eventId, account) =>
      processOnce(knex, CONSUMER, eventId, async (trx) => {
        await trx('account_counts')
          .insert({ account_id: account.accountId, user_id: account.userId, currency: account.currency })
          .onConflict('account_id')
          .ignore();
      }),

    forgetUser: (eventId, userId) =>
      processOnce(knex, CONSUMER, eventId, async (trx) => {
        await trx('account_counts').where({ user_id: userId }).delete();
      }),

    async countByCurrency() {
      const rows: { currency: string; count: number }[] = await knex('account_counts')
        .select('currency')
        .select(knex.raw('count(*)::integer AS count'))
        .groupBy('currency')
        .orderBy('currency');
      return Object.fromEntries(rows.map((row) => [row.currency, row.count]));
    },
  };
}
