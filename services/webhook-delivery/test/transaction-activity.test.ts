import { expect } from 'chai';
import { eventually, useStarted } from '@payments/testkit';
import { createTransactionActivityRepository } from '../src/data/transaction-activity-repository.js';
import { completedDeposit, startDeliveryHarness } from './support/delivery-harness.js';

describe("a transaction's webhook activity (a timeline's part)", function () {
  this.timeout(40_000);

  const harness = useStarted(() => startDeliveryHarness());

  it('keeps the first ten and the latest ten attempts of a delivery tried more often than that', async () => {
    const user = harness.newUser();
    await harness.register(user, '/often');
    const data = completedDeposit(user.id);
    await harness.publish('TransactionCompleted', data);
    const [delivery] = await eventually(
      () => harness.db('webhook_delivery_attempts').select('delivery_id'),
      (rows) => rows.length === 1,
    );
    // Redeliveries and retries add attempts: 25 in all.
    await harness.db('webhook_delivery_attempts').insert(
      Array.from({ length: 24 }, (_, i) => ({
        delivery_id: delivery.delivery_id,
        attempt: i + 2,
        status_code: 500,
        latency_ms: 5,
      })),
    );
    const found = await createTransactionActivityRepository(harness.db).findAbout(data.transaction_id, 10);
    const attempts = found.data[0]?.deliveries[0]?.attempts.map((attempt) => attempt.attempt);
    expect(attempts).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
  });
});
