import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { createFakeProvider } from './support/fake-provider.js';
import {
  startLedgerHarness,
  useLedgerHarness,
  type LedgerHarness,
  type TestUser,
} from './support/ledger-harness.js';

interface CaseView {
  kind: string;
  provider_reference: string;
  transaction_id: string | null;
  provider_amount: number;
}

describe('ledger: a provider object moves money only for the transaction that asked for it', function () {
  this.timeout(60_000);
  const provider = createFakeProvider();
  let alice: TestUser;
  let admin: TestUser;

  const ledger = useLedgerHarness({ transport: 'amqp', provider }, { booksBalance: true });
  before(async () => {
    admin = ledger.newUser('admin');
  });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  /** A deposit of 10.00 USD the ledger asked the provider for, with the PaymentIntent it recorded. */
  const depositAsked = async () => {
    const account = await ledger.openAccount(alice);
    const accepted = await ledger.deposit(alice, account.id, 10);
    expect(accepted.status, accepted.text).to.equal(202);
    const id = accepted.body.id as string;
    const shown = await eventually(
      () => ledger.call('GET', `/transaction/${id}`, { user: alice }),
      (r) => r.body?.provider_payment !== undefined,
    );
    return { account, id, paymentIntent: shown.body.provider_payment.reference as string };
  };
  const casesOf = async (reference: string) => {
    const listed = await ledger.call('GET', '/admin/reconciliation?limit=100', { user: admin });
    expect(listed.status, listed.text).to.equal(200);
    return (listed.body.data as CaseView[]).filter((found) => found.provider_reference === reference);
  };
  const paid = { amount: 1000, currency: 'USD' } as const;
  /** Lets the ledger consume what was published, then shows the deposit as it stands. */
  const settledView = async (id: string) => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return (await ledger.call('GET', `/transaction/${id}`, { user: alice })).body;
  };

  it('credits nothing for a second PaymentIntent naming the deposit in its metadata, and opens a case', async () => {
    const { account, id, paymentIntent } = await depositAsked();
    await ledger.confirm('pi_attacker', 'completed', { transaction_id: id, ...paid });
    const cases = await eventually(
      () => casesOf('pi_attacker'),
      (found) => found.length === 1,
    );
    expect(cases[0]).to.include({ kind: 'foreign_object', transaction_id: id, provider_amount: 10 });
    expect((await settledView(id)).status).to.equal('pending');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);

    // The PaymentIntent the ledger asked for completes it, once.
    await ledger.confirm(paymentIntent, 'completed', { transaction_id: id, ...paid });
    await ledger.waitForStatus(alice, id, 'completed');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(10);
  });

  it('takes back nothing for a refund or dispute of a payment the ledger did not ask for', async () => {
    const { account, id, paymentIntent } = await depositAsked();
    await ledger.confirm(paymentIntent, 'completed', { transaction_id: id, ...paid });
    await ledger.waitForStatus(alice, id, 'completed');
    await ledger.adjust('pi_other', 'refund', 1000, { reference: 're_other' });
    await ledger.adjust('pi_other', 'dispute_lost', 1000, { reference: 'dp_other' });
    await eventually(
      () => casesOf('pi_other'),
      (found) => found.length === 1,
    );
    expect((await settledView(id)).status).to.equal('completed');
    const balance = await ledger.balanceOf(alice, account.id);
    expect(balance).to.include({ balance: 10, available_balance: 10 });
  });

  it('credits nothing for the recorded PaymentIntent in live mode, or on a connected account', async () => {
    const { account, id, paymentIntent } = await depositAsked();
    await ledger.confirm(paymentIntent, 'completed', { transaction_id: id, ...paid, livemode: true });
    await ledger.confirm(paymentIntent, 'completed', { transaction_id: id, ...paid, account: 'acct_x' });
    await eventually(
      () => casesOf(paymentIntent),
      (found) => found.length === 1,
    );
    expect((await settledView(id)).status).to.equal('pending');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
  });

  it('looks again at an event that came before the ledger recorded what the provider made', async () => {
    const slow = createFakeProvider();
    let release: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (release = resolve));
    slow.behave = () => undefined;
    const create = slow.createPayment.bind(slow);
    slow.createPayment = async (request) => {
      const created = await create(request);
      await answered;
      return created;
    };
    const early = await startLedgerHarness({ transport: 'amqp', provider: slow });
    try {
      const bob = early.newUser();
      const account = await early.openAccount(bob);
      const accepted = await early.deposit(bob, account.id, 10);
      const id = accepted.body.id as string;
      await eventually(
        async () => slow.paymentsOf(id).length,
        (count) => count > 0,
      );
      const reference = `pi_${id.replaceAll('-', '')}`;
      await early.confirm(reference, 'completed', { transaction_id: id, ...paid });
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await early.waitForStatus(bob, id, 'completed', 30_000);
      expect((await early.balanceOf(bob, account.id)).balance).to.equal(10);
    } finally {
      release();
      await early.stop();
    }
  });

  describe('with stand-in confirmations off (production asking a real provider)', () => {
    let strict: LedgerHarness;
    before(async () => {
      strict = await startLedgerHarness({
        transport: 'amqp',
        provider: createFakeProvider(),
        env: { STAND_IN_CONFIRMATIONS: 'false' },
      });
    });
    after(async () => {
      await strict?.stop();
    });

    it("credits nothing for SPEC's stand-in confirmation, and opens a case", async () => {
      const bob = strict.newUser();
      const account = await strict.openAccount(bob);
      const id = (await strict.deposit(bob, account.id, 10)).body.id as string;
      await strict.confirm(id, 'completed', paid);
      const listed = await eventually(
        async () =>
          (await strict.call('GET', '/admin/reconciliation', { user: strict.newUser('admin') })).body
            .data as CaseView[],
        (found) => found.some((c) => c.provider_reference === id),
      );
      expect(listed.find((c) => c.provider_reference === id)).to.include({ kind: 'foreign_object' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await strict.balanceOf(bob, account.id)).balance).to.equal(0);
    });
  });
});
