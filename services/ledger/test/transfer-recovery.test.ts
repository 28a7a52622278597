import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { AnyEvent } from '@payments/contracts';
import { startLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

/**
 * The ledger settles the transfers it accepts in the accepting process, without the broker. One that process
 * never settled (it crashed between acceptance and settlement) is settled by the maintenance sweep, once.
 */
describe('ledger transfer settlement without the broker', () => {
  let ledger: LedgerHarness;
  let alice: TestUser;
  let bob: TestUser;
  const published: AnyEvent[] = [];

  before(async () => {
    ledger = await startLedgerHarness({
      env: { HOLD_SWEEP_INTERVAL_MS: '100' },
      wrapBus: (bus) => ({
        ...bus,
        async publish(event: AnyEvent) {
          await bus.publish(event);
          published.push(event);
        },
      }),
    });
  });
  after(() => ledger?.stop());
  beforeEach(() => {
    alice = ledger.newUser();
    bob = ledger.newUser();
  });
  afterEach(async () => {
    expect(await ledger.audit()).to.include({ ok: true });
  });

  it('settles an accepted transfer in the accepting process: nothing goes through the broker but its outcome', async () => {
    const source = await ledger.openAccount(alice);
    const destination = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 10);
    const response = await ledger.call('POST', `/account/${source.id}/transfer`, {
      user: alice,
      body: { amount: 4, currency: 'USD', to_account_id: destination.id },
    });
    expect(response.status).to.equal(202);
    expect(response.body.status).to.equal('pending');
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect((await ledger.balanceOf(bob, destination.id)).balance).to.equal(4);
    const about = published.filter(
      (event) => (event.data as { transaction_id?: string }).transaction_id === response.body.id,
    );
    expect(about.map((event) => event.type)).to.deep.equal(['TransactionCompleted']);
  });

  it('settles, once, a transfer its ledger accepted but never settled (a crash in between)', async () => {
    const source = await ledger.openAccount(alice);
    const destination = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 10);
    const id = randomUUID();
    // As the acceptance writes it, 15 s ago, with its hold; no process has it to settle.
    await ledger.db.transaction(async (trx) => {
      await trx('transactions').insert({
        id,
        account_id: source.id,
        user_id: alice.id,
        type: 'transfer',
        amount: 600,
        currency: 'USD',
        counterparty_account_id: destination.id,
        counterparty_user_id: bob.id,
        created_at: trx.raw(`now() - interval '15 seconds'`),
        updated_at: trx.raw(`now() - interval '15 seconds'`),
      });
      await trx('accounts').where({ id: source.id }).decrement('available_balance', 600);
    });
    await ledger.waitForStatus(alice, id, 'completed', 5000);
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 4, available_balance: 4 });
    expect(await ledger.balanceOf(bob, destination.id)).to.include({ balance: 6, available_balance: 6 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const completions = published.filter(
      (event) =>
        event.type === 'TransactionCompleted' &&
        (event.data as { transaction_id: string }).transaction_id === id,
    );
    expect(completions).to.have.length(1);
  });
});
