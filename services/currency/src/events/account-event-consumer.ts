import type { Consumer, EventBus, Metrics } from '@payments/service-kit';
import type { AccountCountRepository } from '../data/account-count-repository.js';

/** Keeps the per-currency account counts of /statistics in step with the ledger's AccountOpened and UserDeleted. */
export function startAccountEventConsumer(
  bus: EventBus,
  accounts: AccountCountRepository,
  metrics: Metrics,
): Promise<Consumer> {
  const consumed = metrics.counter(
    'currency_events_consumed_total',
    'Events the currency service consumed, by type and whether they were new or duplicates',
    ['type', 'outcome'],
  );
  return bus.consume('currency', {
    AccountOpened: async (event, { logger }) => {
      const { account_id, user_id, currency } = event.data;
      const outcome = await accounts.recordAccountOpened(event.id, {
        accountId: account_id,
        userId: user_id,
        currency,
      });
      consumed.inc({ type: event.type, outcome });
      if (outcome === 'duplicate') logger.info('duplicate AccountOpened ignored');
    },
    UserDeleted: async (event, { logger }) => {
      const outcome = await accounts.forgetUser(event.id, event.data.user_id);
      consumed.inc({ type: event.type, outcome });
      if (outcome === 'duplicate') logger.info('duplicate UserDeleted ignored');
    },
  });
}
