import type { Knex } from '@payments/service-kit';
import type { OncePerEvent, UnitOfWork } from '../use-cases/unit-of-work.js';

const DEADLOCK = '40P01';
const SERIALIZATION_FAILURE = '40001';
const ATTEMPTS = 5;
/** The ledger's name in the inbox (processed_events.consumer), as it always was. */
export const INBOX_CONSUMER = 'ledger';

/** Runs `attempt` again, up to ATTEMPTS times in all, while it fails as a deadlock or serialization victim. */
export async function retryingConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      const code = (error as { code?: string }).code;
      const retryable = code === DEADLOCK || code === SERIALIZATION_FAILURE;
      if (!retryable || tries >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * tries));
    }
  }
}

/** Database transactions whose operations are `unitOf` the transaction: plain ones, and the inbox's. */
export function unitOfWork<U>(
  knex: Knex,
  unitOf: (trx: Knex.Transaction) => U,
): UnitOfWork<U> & OncePerEvent<U> {
  return {
    inTransaction: (work) => retryingConflicts(() => knex.transaction((trx) => work(unitOf(trx)))),
    processEventsOnce: (eventIds, work) =>
      retryingConflicts(() =>
        knex.transaction(async (trx) => {
          // The kit's processBatchOnce, with the inbox rows as one array parameter (a fixed statement text, no
          // per-row placeholders to build and parse). Sorted: one order everywhere, so two consumers claiming
          // overlapping redeliveries cannot deadlock.
          const unique = [...new Set(eventIds)].sort();
          const { rows }: { rows: { event_id: string }[] } = await trx.raw(
            `INSERT INTO processed_events (event_id, consumer)
             SELECT id, ? FROM unnest(?::text[]) WITH ORDINALITY AS e(id, n) ORDER BY e.n
             ON CONFLICT (event_id, consumer) DO NOTHING RETURNING event_id`,
            [INBOX_CONSUMER, unique],
          );
          const fresh = new Set(rows.map((row) => row.event_id));
          if (fresh.size > 0) await work(unitOf(trx), fresh);
          return fresh;
        }),
      ),
  };
}
