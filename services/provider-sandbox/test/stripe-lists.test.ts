import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { useStarted } from '@payments/testkit';
import { aConnectedAccount, startEventReceiver, startStripeSandbox } from './support/stripe-sandbox.js';

interface Listed {
  id: string;
  created: number;
}

/** Stripe's list order: newest first, and by id (greatest first) within a second. */
const newestFirst = (objects: readonly Listed[]) =>
  [...objects].sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1)).map((object) => object.id);

const idsOf = (objects: readonly Listed[]) => objects.map((object) => object.id);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Makes `earlier` objects, then (once the clock has passed the second the last of them was made in) `later` more,
 * one at a time: the two groups have different `created`, so newest first is more than the order of ids.
 */
async function acrossASecond<T extends Listed>(
  make: (index: number) => Promise<T>,
  earlier: number,
  later: number,
): Promise<{ earlier: T[]; later: T[]; all: T[] }> {
  const first: T[] = [];
  for (let index = 0; index < earlier; index += 1) first.push(await make(index));
  const lastSecond = Math.max(...first.map((object) => object.created));
  await sleep(Math.max(0, (lastSecond + 1) * 1000 - Date.now() + 20));
  const second: T[] = [];
  for (let index = earlier; index < earlier + later; index += 1) second.push(await make(index));
  return { earlier: first, later: second, all: [...first, ...second] };
}

describe("provider-sandbox: Stripe's lists, paged through by the stripe library", () => {
  // The events go to a receiver these tests never read: they read the provider's records.
  const receiver = useStarted(startEventReceiver);
  let sandbox: Awaited<ReturnType<typeof startStripeSandbox>> | undefined;
  let stripe: Stripe;

  // A sandbox of its own for each test, so a list holds exactly what the test made.
  beforeEach(async () => {
    sandbox = await startStripeSandbox(receiver.url, {
      SANDBOX_AUTO_CONFIRM: 'false',
      SANDBOX_DELAY_MS: '50',
    });
    stripe = sandbox.stripe;
  });
  afterEach(() => sandbox?.stop());

  const paid = (amount: number, paymentMethod = 'pm_card_visa') =>
    stripe.paymentIntents.create({
      amount,
      currency: 'usd',
      metadata: { transaction_id: randomUUID() },
      payment_method: paymentMethod,
      confirm: true,
    });

  const refused = (request: Promise<unknown>) =>
    request.then(
      () => null,
      (error: unknown) => error as Stripe.errors.StripeError,
    );

  describe('PaymentIntents', () => {
    it('auto-pages through every PaymentIntent exactly once, newest first, with what reconciliation reads', async () => {
      const made = await acrossASecond(
        async (index) => {
          const transactionId = randomUUID();
          const created = await stripe.paymentIntents.create({
            amount: 1000 + index,
            currency: 'usd',
            metadata: { transaction_id: transactionId },
          });
          return index % 2 === 0
            ? stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' })
            : created;
        },
        3,
        4,
      );

      const listed: Stripe.PaymentIntent[] = [];
      for await (const intent of stripe.paymentIntents.list({ limit: 3 })) listed.push(intent);

      expect(idsOf(listed)).to.deep.equal(newestFirst(made.all));
      expect(new Set(idsOf(listed)).size).to.equal(7);
      expect(idsOf(listed.slice(0, 4))).to.have.members(idsOf(made.later));
      for (const intent of made.all) {
        const found = listed.find((each) => each.id === intent.id);
        expect(found).to.deep.include({
          created: intent.created,
          amount: intent.amount,
          amount_received: intent.status === 'succeeded' ? intent.amount : 0,
          currency: 'usd',
          status: intent.status,
          metadata: intent.metadata,
        });
      }
      expect(listed.filter((intent) => intent.status === 'succeeded')).to.have.length(4);

      const first = await stripe.paymentIntents.list({ limit: 3 });
      expect(first).to.deep.include({ object: 'list', has_more: true, url: '/v1/payment_intents' });
      expect(first.data).to.have.length(3);
      const everything = await stripe.paymentIntents.list({ limit: 100 });
      expect(everything.has_more).to.equal(false);
      expect(await stripe.paymentIntents.list().autoPagingToArray({ limit: 5 })).to.have.length(5);
    });

    it('filters by created: created[gte], [gt], [lt], [lte] and an exact second', async () => {
      const made = await acrossASecond((index) => paid(500 + index), 2, 3);
      const second = Math.min(...made.later.map((intent) => intent.created));
      const list = (created: Stripe.RangeQueryParam | number) =>
        stripe.paymentIntents.list({ created, limit: 2 }).autoPagingToArray({ limit: 100 });

      expect(idsOf(await list({ gte: second }))).to.deep.equal(newestFirst(made.later));
      expect(idsOf(await list({ gt: second - 1 }))).to.deep.equal(newestFirst(made.later));
      expect(idsOf(await list({ lt: second }))).to.deep.equal(newestFirst(made.earlier));
      expect(idsOf(await list({ lte: second - 1 }))).to.deep.equal(newestFirst(made.earlier));
      expect(idsOf(await list({ gte: second + 3600 }))).to.deep.equal([]);
      const inThatSecond = made.later.filter((intent) => intent.created === second);
      expect(idsOf(await list(second))).to.deep.equal(newestFirst(inThatSecond));
    });

    it('pages back with ending_before: the objects just newer than the cursor, still newest first', async () => {
      const made = await acrossASecond((index) => paid(700 + index), 3, 3);
      const order = newestFirst(made.all);
      const page = await stripe.paymentIntents.list({ ending_before: order[4], limit: 2 });
      expect(idsOf(page.data)).to.deep.equal(order.slice(2, 4));
      expect(page.has_more).to.equal(true);
      const after = await stripe.paymentIntents.list({ starting_after: order[1], limit: 2 });
      expect(idsOf(after.data)).to.deep.equal(order.slice(2, 4));
      expect(after.has_more).to.equal(true);
      // The library walks an ending_before list towards the newest, oldest first.
      const newer = await stripe.paymentIntents
        .list({ ending_before: order[5], limit: 2 })
        .autoPagingToArray({ limit: 100 });
      expect(idsOf(newer)).to.deep.equal(order.slice(0, 5).reverse());
    });

    it("refuses a limit outside 1–100, an unknown cursor and a filter it does not apply with Stripe's errors", async () => {
      await paid(100);
      for (const limit of [0, 101]) {
        const error = await refused(stripe.paymentIntents.list({ limit }));
        expect(error, `limit ${limit}`).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
        expect(error).to.include({ statusCode: 400, type: 'StripeInvalidRequestError', param: 'limit' });
      }
      const unknown = await refused(stripe.paymentIntents.list({ starting_after: 'pi_missing' }));
      expect(unknown).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(unknown).to.include({ statusCode: 400, code: 'resource_missing', param: 'starting_after' });
      const both = await refused(
        stripe.paymentIntents.list({ starting_after: 'pi_a', ending_before: 'pi_b' }),
      );
      expect(both).to.include({ statusCode: 400 });
      const unapplied = await refused(stripe.paymentIntents.list({ customer: 'cus_someone' }));
      expect(unapplied).to.include({ statusCode: 400, code: 'parameter_unknown', param: 'customer' });
      const notAnInteger = await refused(
        stripe.paymentIntents.list({ created: { gte: 'yesterday' as unknown as number } }),
      );
      expect(notAnInteger).to.include({ statusCode: 400, param: 'created[gte]' });
    });
  });

  it('auto-pages through refunds, of every payment or of one, with their amounts and charge', async () => {
    const [one, other] = [await paid(5000), await paid(3000)];
    const made = await acrossASecond(
      (index) =>
        stripe.refunds.create({ payment_intent: index % 2 ? other.id : one.id, amount: 100 + index }),
      2,
      3,
    );

    const listed = await stripe.refunds.list({ limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(idsOf(listed)).to.deep.equal(newestFirst(made.all));
    expect(idsOf(listed.slice(0, 3))).to.have.members(idsOf(made.later));
    const latest = made.later.at(-1) as Stripe.Refund;
    expect(listed.find((refund) => refund.id === latest.id)).to.deep.include({
      created: latest.created,
      amount: 104,
      currency: 'usd',
      status: 'succeeded',
      payment_intent: one.id,
      charge: one.latest_charge,
    });

    const ofOther = await stripe.refunds
      .list({ payment_intent: other.id, limit: 1 })
      .autoPagingToArray({ limit: 100 });
    expect(idsOf(ofOther)).to.deep.equal(
      newestFirst(made.all.filter((refund) => refund.payment_intent === other.id)),
    );
    const since = Math.min(...made.later.map((refund) => refund.created));
    const recent = await stripe.refunds.list({ created: { gte: since } }).autoPagingToArray({ limit: 100 });
    expect(idsOf(recent)).to.deep.equal(newestFirst(made.later));
  });

  it('auto-pages through disputes, of every payment or of one, with their status as it changes', async () => {
    const made = await acrossASecond(
      async (index) => {
        const intent = await paid(2000 + index, 'pm_card_createDispute');
        const [dispute] = (await stripe.disputes.list({ payment_intent: intent.id })).data;
        return { ...(dispute as Stripe.Dispute), intent };
      },
      2,
      3,
    );
    const closed = made.earlier[0]!;
    await stripe.disputes.close(closed.id);

    const listed = await stripe.disputes.list({ limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(idsOf(listed)).to.deep.equal(newestFirst(made.all));
    expect(idsOf(listed.slice(0, 3))).to.have.members(idsOf(made.later));
    expect(listed.find((dispute) => dispute.id === closed.id)).to.deep.include({
      created: closed.created,
      amount: 2000,
      currency: 'usd',
      status: 'lost',
      payment_intent: closed.intent.id,
      charge: closed.intent.latest_charge,
    });
    expect(listed.filter((dispute) => dispute.status === 'needs_response')).to.have.length(4);

    const since = Math.min(...made.later.map((dispute) => dispute.created));
    const recent = await stripe.disputes
      .list({ created: { gte: since }, limit: 1 })
      .autoPagingToArray({ limit: 100 });
    expect(idsOf(recent)).to.deep.equal(newestFirst(made.later));
    const ofOne = await stripe.disputes.list({ payment_intent: closed.intent.id });
    expect(idsOf(ofOne.data)).to.deep.equal([closed.id]);
  });

  it('auto-pages through transfers, by destination and transfer group, with what has been reversed', async () => {
    const [first, second] = [
      await stripe.accounts.create({ type: 'express', country: 'US' }),
      await stripe.accounts.create({ type: 'express', country: 'US' }),
    ];
    const group = randomUUID();
    const made = await acrossASecond(
      (index) =>
        stripe.transfers.create({
          amount: 1000 + index,
          currency: 'usd',
          destination: index % 2 ? second.id : first.id,
          metadata: { transaction_id: randomUUID() },
          ...(index === 4 && { transfer_group: group }),
        }),
      2,
      3,
    );
    const [whole, part] = [made.earlier[0]!, made.later[0]!];
    await stripe.transfers.createReversal(whole.id);
    await stripe.transfers.createReversal(part.id, { amount: 300 });

    const listed = await stripe.transfers.list({ limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(idsOf(listed)).to.deep.equal(newestFirst(made.all));
    expect(idsOf(listed.slice(0, 3))).to.have.members(idsOf(made.later));
    expect(listed.find((transfer) => transfer.id === whole.id)).to.deep.include({
      created: whole.created,
      amount: 1000,
      amount_reversed: 1000,
      reversed: true,
      currency: 'usd',
      destination: first.id,
      metadata: whole.metadata,
      transfer_group: null,
    });
    expect(listed.find((transfer) => transfer.id === part.id)).to.deep.include({
      amount_reversed: 300,
      reversed: false,
    });

    const toSecond = await stripe.transfers
      .list({ destination: second.id, limit: 1 })
      .autoPagingToArray({ limit: 100 });
    expect(idsOf(toSecond)).to.deep.equal(newestFirst(made.all.filter((t) => t.destination === second.id)));
    const grouped = await stripe.transfers.list({ transfer_group: group });
    expect(idsOf(grouped.data)).to.deep.equal([made.later[2]!.id]);
    const since = Math.min(...made.later.map((transfer) => transfer.created));
    const recent = await stripe.transfers.list({ created: { gte: since } }).autoPagingToArray({ limit: 100 });
    expect(idsOf(recent)).to.deep.equal(newestFirst(made.later));
  });

  describe('payouts, on a connected account (Stripe-Account)', () => {
    const funded = async (amount: number, accountNumber?: string) => {
      const account = await aConnectedAccount(stripe, accountNumber);
      await stripe.transfers.create({ amount, currency: 'usd', destination: account.id });
      return account.id;
    };
    const payout = (account: string, amount: number) =>
      stripe.payouts.create(
        { amount, currency: 'usd', metadata: { transaction_id: randomUUID() } },
        { stripeAccount: account },
      );

    it("auto-pages through one account's payouts only, newest first, by status once the bank answered", async () => {
      const [mine, theirs, closed] = [
        await funded(10_000),
        await funded(10_000),
        await funded(10_000, '000111111113'),
      ];
      const made = await acrossASecond((index) => payout(mine, 100 + index), 2, 3);
      const foreign = await payout(theirs, 400);
      const failed = await payout(closed, 500);

      const listed = await stripe.payouts
        .list({ limit: 2 }, { stripeAccount: mine })
        .autoPagingToArray({ limit: 100 });
      expect(idsOf(listed)).to.deep.equal(newestFirst(made.all));
      expect(idsOf(listed.slice(0, 3))).to.have.members(idsOf(made.later));
      expect(idsOf(listed)).not.to.include(foreign.id);
      expect((await stripe.payouts.list()).data, 'the platform pays out nothing').to.deep.equal([]);

      const since = Math.min(...made.later.map((each) => each.created));
      const recent = await stripe.payouts
        .list({ created: { gte: since }, limit: 1 }, { stripeAccount: mine })
        .autoPagingToArray({ limit: 100 });
      expect(idsOf(recent)).to.deep.equal(newestFirst(made.later));

      // SANDBOX_DELAY_MS after each was made, the bank has answered.
      await sleep(300);
      const paid = await stripe.payouts.list({ status: 'paid' }, { stripeAccount: mine });
      expect(idsOf(paid.data)).to.have.members(idsOf(made.all));
      expect((await stripe.payouts.list({ status: 'pending' }, { stripeAccount: mine })).data).to.deep.equal(
        [],
      );
      const [bounced] = (await stripe.payouts.list({ status: 'failed' }, { stripeAccount: closed })).data;
      expect(bounced).to.deep.include({
        id: failed.id,
        created: failed.created,
        amount: 500,
        currency: 'usd',
        status: 'failed',
        metadata: failed.metadata,
        failure_message: 'The bank account has been closed.',
      });
      expect(await stripe.payouts.retrieve(failed.id, {}, { stripeAccount: closed })).to.deep.include({
        status: 'failed',
        failure_message: 'The bank account has been closed.',
      });
      expect(bounced).not.to.have.property('account');
    });

    it("does not show an account's payout through another account, by list, cursor or id", async () => {
      const [mine, theirs] = [await funded(1000), await funded(1000)];
      const own = await payout(mine, 200);
      const foreign = await payout(theirs, 300);
      expect(idsOf((await stripe.payouts.list({}, { stripeAccount: mine })).data)).to.deep.equal([own.id]);
      const byId = await refused(stripe.payouts.retrieve(foreign.id, {}, { stripeAccount: mine }));
      expect(byId).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(byId).to.include({ statusCode: 404, code: 'resource_missing' });
      expect(await refused(stripe.payouts.retrieve(foreign.id))).to.include({ statusCode: 404 });
      const byCursor = await refused(
        stripe.payouts.list({ starting_after: foreign.id }, { stripeAccount: mine }),
      );
      expect(byCursor).to.include({ statusCode: 400, code: 'resource_missing', param: 'starting_after' });
      expect(await stripe.payouts.retrieve(foreign.id, {}, { stripeAccount: theirs })).to.include({
        id: foreign.id,
        amount: 300,
      });
    });
  });
});
