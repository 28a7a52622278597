import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { AnyEvent, EventEnvelope, EventType } from '@payments/contracts';
import { DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization, type Consumer } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ledger pending-hold expiry', () => {
  let alice: TestUser;
  let admin: TestUser;
  let provider: Consumer;
  /** What reached the provider: a withdrawal it never saw can safely be canceled. */
  const payoutRequests: EventEnvelope<'WithdrawalRequested'>[] = [];
  /** Event types the ledger's relay fails to publish (a broker refusing them), or stalls on (a publish in flight). */
  const refused = new Set<EventType>();
  const stalled = new Set<EventType>();
  let releaseStalled: () => void = () => undefined;
  /** Every event the ledger's relay published. */
  const published: AnyEvent[] = [];

  const ledger = useLedgerHarness(
    {
      env: { HOLD_EXPIRY_SECONDS: '1', HOLD_SWEEP_INTERVAL_MS: '100' },
      wrapBus: (bus) => ({
        ...bus,
        async publish(event: AnyEvent) {
          if (refused.has(event.type)) throw new Error(`test broker refuses ${event.type}`);
          if (stalled.has(event.type)) {
            await new Promise<void>((resolve) => {
              const previous = releaseStalled;
              releaseStalled = () => {
                previous();
                resolve();
              };
            });
          }
          await bus.publish(event);
          published.push(event);
        },
      }),
    },
    {
      beforeStop: async () => {
        releaseStalled();
        await provider?.stop();
      },
    },
  );
  before(async () => {
    alice = ledger.newUser();
    admin = ledger.newUser('admin');
    provider = await ledger.recordProviderRequests('WithdrawalRequested', payoutRequests);
  });
  afterEach(async () => {
    refused.clear();
    stalled.clear();
    releaseStalled();
    expect(await ledger.audit()).to.include({ ok: true });
  });

  const withdraw = (accountId: string, amount: number) => ledger.withdraw(alice, accountId, amount);
  const status = async (transactionId: string) =>
    (await ledger.call('GET', `/transaction/${transactionId}`, { user: alice })).body.status as string;
  const reconciliation = () => ledger.call('GET', '/admin/reconciliation', { user: admin });
  const awaitingGauge = async () => {
    const response = await fetch(`${ledger.url}/metrics`, {
      headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN),
    });
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith('ledger_withdrawals_awaiting_reconciliation'));
    return Number(line?.split(' ').pop());
  };
  const flagged = (transactionId: string) =>
    eventually(
      reconciliation,
      (r) => r.body?.data?.some((found: { id: string }) => found.id === transactionId),
      { timeoutMs: 10_000 },
    );
  const outboxRows = async (transactionId: string) =>
    ledger
      .db('outbox')
      .whereRaw(`event -> 'data' ->> 'transaction_id' = ?`, [transactionId])
      .where('event', '@>', JSON.stringify({ type: 'WithdrawalRequested' }));

  it('cancels a withdrawal whose request never left the ledger, gives the hold back and takes the request back', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 50);
    refused.add('WithdrawalRequested');
    const response = await withdraw(account.id, 20);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ available_balance: 30 });
    const canceled = await ledger.waitForStatus(alice, response.body.id, 'canceled', 5000);
    expect(canceled.body.failure_reason).to.match(/expired/);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 50, available_balance: 50 });
    expect(await outboxRows(response.body.id)).to.have.length(0);
    refused.clear();
    await sleep(500);
    expect(payoutRequests.map((r) => r.data.transaction_id)).not.to.include(response.body.id);
    // A payout confirmation for a request the provider never had changes nothing.
    await ledger.confirm(response.body.id, 'completed', { movement: 'payout' });
    await sleep(300);
    expect(await status(response.body.id)).to.equal('canceled');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 50, available_balance: 50 });
  });

  it('keeps a withdrawal the provider received pending with its hold, flagged for reconciliation; a late payout settles it once', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 40);
    const response = await withdraw(account.id, 15);
    await eventually(
      async () => payoutRequests.some((r) => r.data.transaction_id === response.body.id),
      (seen) => seen,
    );
    const listed = await flagged(response.body.id);
    expect(listed.status).to.equal(200);
    const found = listed.body.data.find((f: { id: string }) => f.id === response.body.id);
    expect(found).to.include({ status: 'pending', type: 'withdrawal', amount: 15, user_id: alice.id });
    expect(Date.parse(found.reconciliation_required_at)).to.be.greaterThan(Date.parse(found.created_at));
    // Several sweeps later: still pending, the hold untouched.
    await sleep(500);
    expect(await status(response.body.id)).to.equal('pending');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 40, available_balance: 25 });
    expect(await awaitingGauge()).to.equal(1);
    // Nor can deleting the user release it.
    const removal = await ledger.call('POST', `/internal/users/${alice.id}/removal`);
    expect(removal.status).to.equal(422);
    expect(removal.body.detail).to.match(/1 awaiting reconciliation/);

    // The provider's late word, delivered twice under two event ids: one payout, one debit.
    await ledger.confirm(response.body.id, 'completed', {
      movement: 'payout',
      amount: 1500,
      currency: 'USD',
    });
    await ledger.confirm(response.body.id, 'completed', {
      movement: 'payout',
      amount: 1500,
      currency: 'USD',
    });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    await sleep(300);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 25, available_balance: 25 });
    expect((await reconciliation()).body.data).to.deep.equal([]);
    expect(await awaitingGauge()).to.equal(0);
  });

  it('releases the hold of a flagged withdrawal once when the late answer is a payout failure', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 10);
    const response = await withdraw(account.id, 10);
    await flagged(response.body.id);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 10, available_balance: 0 });
    await ledger.confirm(response.body.id, 'failed', { movement: 'payout' });
    await ledger.confirm(response.body.id, 'failed', { movement: 'payout' });
    await ledger.waitForStatus(alice, response.body.id, 'failed');
    await sleep(300);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 10, available_balance: 10 });
    expect(await awaitingGauge()).to.equal(0);
  });

  it('treats a request the relay is still publishing as handed out: flagged, never released', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 8);
    stalled.add('WithdrawalRequested');
    const response = await withdraw(account.id, 8);
    await flagged(response.body.id);
    expect(await status(response.body.id)).to.equal('pending');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 8, available_balance: 0 });
    releaseStalled();
    await ledger.confirm(response.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
  });

  /**
   * A transfer accepted and held, as the acceptance writes it, that its ledger never settled (it crashed before
   * its settlement committed): the ledger settles transfers itself, in the process that accepted them.
   */
  const unsettledTransfer = async (accountId: string, toAccountId: string, amount: number) => {
    const id = randomUUID();
    const destination = await ledger.db('accounts').where({ id: toAccountId }).first('user_id');
    await ledger.db.transaction(async (trx) => {
      await trx('transactions').insert({
        id,
        account_id: accountId,
        user_id: alice.id,
        type: 'transfer',
        amount,
        currency: 'USD',
        counterparty_account_id: toAccountId,
        counterparty_user_id: destination.user_id,
      });
      await trx('accounts').where({ id: accountId }).decrement('available_balance', amount);
    });
    return id;
  };

  it('still cancels an expired transfer its ledger never settled', async () => {
    const account = await ledger.openAccount(alice);
    const other = await ledger.openAccount(ledger.newUser());
    await ledger.fund(alice, account.id, 5);
    const id = await unsettledTransfer(account.id, other.id, 500);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 5, available_balance: 0 });
    await ledger.waitForStatus(alice, id, 'canceled', 5000);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 5, available_balance: 5 });
  });

  it('announces a canceled transaction as TransactionCanceled, not TransactionFailed', async () => {
    const account = await ledger.openAccount(alice);
    const other = await ledger.openAccount(ledger.newUser());
    await ledger.fund(alice, account.id, 3);
    const response = { body: { id: await unsettledTransfer(account.id, other.id, 300) } };
    await ledger.waitForStatus(alice, response.body.id, 'canceled', 5000);
    const about = await eventually(
      async () =>
        published.filter(
          (event) => (event.data as { transaction_id?: string }).transaction_id === response.body.id,
        ),
      (events) => events.some((event) => event.type === 'TransactionCanceled'),
    );
    expect(about.map((event) => event.type))
      .to.include('TransactionCanceled')
      .and.not.include('TransactionFailed');
    const canceled = about.find(
      (event) => event.type === 'TransactionCanceled',
    ) as EventEnvelope<'TransactionCanceled'>;
    expect(canceled.data).to.include({ user_id: alice.id, type: 'transfer', amount: 300, currency: 'USD' });

    // Rendered for webhook-delivery as the public API would, at the version asked for.
    const v11 = await ledger.call('GET', `/internal/transactions/${response.body.id}`, {
      headers: { 'x-api-version': '1.1' },
    });
    expect(v11.status).to.equal(200);
    expect(v11.body).to.include({ id: response.body.id, status: 'canceled', amount: 3, fee: 0 });
    const v10 = await ledger.call('GET', `/internal/transactions/${response.body.id}`);
    expect(v10.body).to.not.have.property('fee');
    const shown = await ledger.call('GET', `/internal/accounts/${account.id}`);
    expect(shown.body).to.include({ id: account.id, user_id: alice.id, balance: 3 });
    const anonymous = await fetch(`${ledger.url}/internal/transactions/${response.body.id}`);
    expect(anonymous.status, 'internal rendering needs the service credential').to.equal(401);
  });

  it('answers 403 to anyone but an administrator asking for the reconciliation list', async () => {
    const response = await ledger.call('GET', '/admin/reconciliation', { user: alice });
    expect(response.status).to.equal(403);
    expect(response.body.code).to.equal('ACCESS_DENIED');
    expect((await ledger.call('GET', '/admin/reconciliation')).status).to.equal(401);
    expect((await ledger.call('GET', '/admin/reconciliation?limit=0', { user: admin })).status).to.equal(400);
  });

  /** A sample's value from the ledger's /metrics, by the start of its line (`name{labels}`). */
  const sample = async (series: string) => {
    const response = await fetch(`${ledger.url}/metrics`, {
      headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN),
    });
    const line = (await response.text()).split('\n').find((l) => l.startsWith(`${series} `));
    return Number(line?.split(' ').pop());
  };

  it('leaves a pending deposit alone: it holds nothing, and /metrics counts it as pending', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 5);
    await sleep(1500);
    expect(await status(deposit.body.id)).to.equal('pending');
    expect(await sample('ledger_transactions_pending{type="deposit",service="ledger"}')).to.be.at.least(1);
    expect(await sample('ledger_oldest_pending_transaction_seconds{service="ledger"}')).to.be.at.least(1.5);
  });
});
