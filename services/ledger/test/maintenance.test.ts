import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { OVERVIEW_LOOKBACK_MS } from '../src/domain/overview.js';
import { useLedgerHarness } from './support/ledger-harness.js';

describe('ledger upkeep: what it forgets', () => {
  const ledger = useLedgerHarness({ env: { HOLD_SWEEP_INTERVAL_MS: '100' } });

  it("forgets declined payment attempts older than the overview's longest window, and keeps the rest", async () => {
    const hoursAgo = (hours: number) => ledger.db.raw(`now() - make_interval(secs => ?)`, [hours * 3600]);
    const lookbackHours = OVERVIEW_LOOKBACK_MS / 3_600_000;
    expect(lookbackHours, 'a day and a bucket').to.be.within(24, 25);
    const attempts = {
      lastWeek: randomUUID(),
      justPast: randomUUID(),
      yesterday: randomUUID(),
      now: randomUUID(),
    };
    await ledger.db('payment_attempt_failures').insert([
      { transaction_id: attempts.lastWeek, failed_at: hoursAgo(24 * 7), reason: 'card_declined' },
      {
        transaction_id: attempts.justPast,
        failed_at: hoursAgo(lookbackHours + 0.1),
        reason: 'card_declined',
      },
      { transaction_id: attempts.yesterday, failed_at: hoursAgo(23), reason: 'insufficient_funds' },
      { transaction_id: attempts.now, failed_at: hoursAgo(0), reason: 'card_declined' },
    ]);
    const kept = await eventually(
      async () =>
        (
          await ledger
            .db('payment_attempt_failures')
            .whereIn('transaction_id', Object.values(attempts))
            .pluck('transaction_id')
        ).sort(),
      (ids) => ids.length === 2,
    );
    expect(kept).to.deep.equal([attempts.yesterday, attempts.now].sort());
  });
});
