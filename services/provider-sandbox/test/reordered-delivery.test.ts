import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, useStarted } from '@payments/testkit';
import { startSandboxWithReceiver } from './support/stripe-sandbox.js';

describe('provider-sandbox: events out of order (SANDBOX_REORDER_EVENTS_MS)', () => {
  const sandbox = useStarted(() =>
    startSandboxWithReceiver({
      SANDBOX_AUTO_CONFIRM: 'false',
      SANDBOX_REORDER_EVENTS_MS: '300',
      SANDBOX_DUPLICATE_DELIVERY: 'true',
    }),
  );
  /** The charge.refunded deliveries of one PaymentIntent's charge, as they arrived. */
  const refundedTotalsOf = (paymentIntentId: string) =>
    sandbox.receiver.deliveries
      .filter(({ event }) => event.type === 'charge.refunded')
      .map(({ event }) => event.data.object as Stripe.Charge)
      .filter((charge) => charge.payment_intent === paymentIntentId);

  it('lets a higher refunded total arrive before a lower one, and still sends every event twice', async () => {
    const paid = await sandbox.stripe.paymentIntents.create({
      amount: 2000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    // Twenty partial refunds one after the other: their totals are 100, 200, … 2000, in the order made.
    for (let refund = 0; refund < 20; refund += 1) {
      await sandbox.stripe.refunds.create({ payment_intent: paid.id, amount: 100 });
    }

    const arrived = await eventually(
      async () => refundedTotalsOf(paid.id),
      (charges) => charges.length >= 40,
    );
    const firstArrivals = [...new Set(arrived.map((charge) => charge.amount_refunded))];
    expect(firstArrivals, 'every refunded total arrived').to.have.members(
      Array.from({ length: 20 }, (_, i) => (i + 1) * 100),
    );
    expect(firstArrivals, 'a later total arrived before an earlier one').not.to.deep.equal(
      [...firstArrivals].sort((a, b) => a - b),
    );

    await new Promise((resolve) => setTimeout(resolve, 400));
    const copies = new Map<string, number>();
    for (const { event } of sandbox.receiver.deliveries)
      copies.set(event.id, (copies.get(event.id) ?? 0) + 1);
    expect([...copies.values()], 'each event delivered exactly twice').to.satisfy((counts: number[]) =>
      counts.every((count) => count === 2),
    );
    // created and succeeded, then refund.created and charge.refunded for each refund
    expect(copies.size).to.equal(2 + 20 * 2);
  });
});
