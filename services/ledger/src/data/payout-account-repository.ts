import type { Knex } from '@payments/service-kit';
import type { PayoutAccount, PayoutAccountStore } from '../use-cases/payout-accounts.js';

/** Each user's connected account at the provider, as payout_accounts links them (one per user). */
export function createPayoutAccountRepository(knex: Knex): PayoutAccountStore {
  const findPayoutAccount = async (userId: string): Promise<PayoutAccount | null> => {
    const row: { provider: string; account: string; created_at: Date } | undefined = await knex(
      'payout_accounts',
    )
      .where({ user_id: userId })
      .first('provider', 'account', 'created_at');
    return row ? { provider: row.provider, account: row.account, createdAt: row.created_at } : null;
  };

  return {
    findPayoutAccount,
    async linkPayoutAccount(link) {
      const inserted: { created_at: Date }[] = await knex('payout_accounts')
        .insert({ user_id: link.userId, provider: link.provider, account: link.account })
        .onConflict('user_id')
        .ignore()
        .returning('created_at');
      if (inserted[0])
        return {
          provider: link.provider,
          account: link.account,
          createdAt: inserted[0].created_at,
          created: true,
        };
      const existing = await findPayoutAccount(link.userId);
      if (!existing) throw new Error('a payout account vanished while it was linked');
      return { ...existing, created: false };
    },
  };
}
