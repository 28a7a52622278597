import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The overdrawn-accounts index keyed on the reversal shortfall instead of the balance: an index (or its
 * predicate) on available_balance made every balance move a non-HOT update, writing a new entry into each of the
 * accounts' indexes (a hold, and every settlement, moves available_balance). The shortfall changes only when a
 * reversal overdraws or the account recovers, so balance moves are HOT again. Below zero implies a shortfall
 * (accounts_user_balances: available_balance >= -reversal_shortfall), so the queries add that condition.
 */
export const overdrawnByShortfall: Migration = {
  name: '010_overdrawn_index_by_shortfall',
  up: sqlSteps(
    `DROP INDEX accounts_overdrawn`,
    `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND reversal_shortfall > 0`,
  ),
  async down(knex) {
    await knex.raw(`DROP INDEX accounts_overdrawn`);
    await knex.raw(
      `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND available_balance < 0`,
    );
  },
};
