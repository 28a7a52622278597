import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger deposits over RabbitMQ', () => {
  let alice: TestUser;
  const provider = createFakeProvider();
  const asked = (transactionId: string) => provider.paymentsOf(transactionId).length > 0;

  const ledger = useLedgerHarness({ transport: 'amqp', provider }, { booksBalance: true });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  it('asks the provider through its own DepositRequested, and credits on PaymentProcessed', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 100.5);
    expect(deposit.status).to.equal(202);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
    const [seen] = await eventually(
      async () => provider.paymentsOf(deposit.body.id),
      (calls) => calls.length > 0,
    );
    expect(seen?.call === 'createPayment' && seen.request.amount).to.equal(10050n);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({
      balance: 100.5,
      available_balance: 100.5,
    });
  });

  it('credits once when the same PaymentProcessed is delivered five times concurrently', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 70);
    const eventId = randomUUID();
    await Promise.all(
      Array.from({ length: 5 }, () => ledger.confirm(deposit.body.id, 'completed', {}, eventId)),
    );
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(70);
  });

  it('keeps publishing after completions, whose announcements no queue is bound to', async () => {
    const account = await ledger.openAccount(alice);
    for (const amount of [1, 2]) {
      const deposit = await ledger.deposit(alice, account.id, amount);
      await eventually(async () => asked(deposit.body.id), Boolean);
      await ledger.confirm(deposit.body.id);
      await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    }
    const last = await ledger.deposit(alice, account.id, 3);
    await eventually(async () => asked(last.body.id), Boolean);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A stuck outbox would keep republishing the whole batch; each request must reach the provider exactly once.
    const amounts = provider.calls.flatMap((c) =>
      c.call === 'createPayment' &&
      c.request.currency === 'USD' &&
      [100n, 200n, 300n].includes(c.request.amount)
        ? [c.request.amount]
        : [],
    );
    expect(amounts.sort()).to.deep.equal([100n, 200n, 300n]);
  });

  it('fails the deposit without a credit when the payment failed', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 9);
    await ledger.confirm(deposit.body.id, 'failed');
    const failed = await ledger.waitForStatus(alice, deposit.body.id, 'failed');
    expect(failed.body.failure_reason).to.be.a('string');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
  });
});

describe('ledger requests over RabbitMQ where no provider sandbox is deployed', () => {
  let alice: TestUser;

  const ledger = useLedgerHarness({ transport: 'amqp', sandbox: false });
  before(async () => {
    alice = ledger.newUser();
  });

  const published = async (transactionId: string) =>
    ledger
      .db('outbox')
      .whereRaw(`event -> 'data' ->> 'transaction_id' = ?`, [transactionId])
      .where('event', '@>', JSON.stringify({ type: 'WithdrawalRequested' }))
      .whereNotNull('published_at');

  it('marks WithdrawalRequested published though no queue is bound to it, and its outbox keeps moving', async () => {
    // Whoever declared what: no queue for the sandbox may exist here, as in production.
    await ledger.broker?.deleteQueue('provider-sandbox');
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 20);
    const withdraw = (amount: number) => ledger.withdraw(alice, account.id, amount);
    const first = await withdraw(5);
    const second = await withdraw(6);
    expect([first.status, second.status]).to.deep.equal([202, 202]);
    for (const withdrawal of [first, second]) {
      const rows = await eventually(
        () => published(withdrawal.body.id),
        (found) => found.length === 1,
        { timeoutMs: 10_000 },
      );
      expect(rows, `WithdrawalRequested of ${withdrawal.body.id} published`).to.have.length(1);
    }
    // Nobody answers the requests; a provider's confirmation still settles, through the same outbox and bus.
    await ledger.confirm(second.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, second.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 14, available_balance: 9 });
    expect((await ledger.call('GET', `/transaction/${first.body.id}`, { user: alice })).body.status).to.equal(
      'pending',
    );
  });
});
