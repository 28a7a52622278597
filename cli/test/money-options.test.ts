import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createPaymentsClient } from '@payments/client';
import { runPayments, startStandInProxy, useStarted, useSystem, type SeenRequest } from '@payments/testkit';

const USER = { username: 'payer', email: 'payer@example.com', password: 'pay-with-pass' };

const pathOf = (request: SeenRequest) => request.url.replace(/^\/v\d+\.\d+(?=\/|$)/, '');
const bodyOf = (request: SeenRequest | undefined) => JSON.parse(request?.body || 'null') as unknown;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `payments deposit --pay-with`, `--reference` and `--metadata` against the whole system. The sandbox pays a
 * PaymentIntent nobody tried to pay 1 ms after it was made: the machine so slow that a payer who confirms after the
 * deposit's PaymentIntent exists always comes too late. A card named with the deposit is tried all the same.
 */
describe('payments money commands: --pay-with, --reference and --metadata', function () {
  this.timeout(120_000);
  let home: string;
  let account: string;
  const system = useSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_DELAY_MS: '1' } } });
  const gateway = useStarted(() => startStandInProxy(system.gatewayUrl));

  const payments = (...args: string[]) =>
    runPayments(args, { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url });
  const sentTo = (method: string, path: string) =>
    gateway.seen((r) => r.method === method && pathOf(r) === path);
  const client = () =>
    createPaymentsClient({
      baseUrl: system.gatewayUrl,
      credentials: { username: USER.username, password: USER.password },
    });

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'payments-cli-money-'));
    const registered = await payments(
      'register',
      '--username',
      USER.username,
      '--email',
      USER.email,
      '--password',
      USER.password,
    );
    expect(registered.code, registered.stderr).to.equal(0);
    const login = await payments('login', '--username', USER.username, '--password', USER.password);
    expect(login.code, login.stderr).to.equal(0);
    account = (await payments('account', 'create', 'USD')).stdout.trim();
  });

  after(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("shows a declined card's attempt and exits 1, the deposit pending and never credited", async () => {
    const run = await payments('deposit', account, '5', '--pay-with', 'pm_card_chargeDeclined');
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.match(
      /^Error: Payment attempt for deposit [0-9a-f-]{36} declined: Your card was declined\.\n/,
    );
    expect(run.stderr).to.match(/stays pending/);
    expect(run.stderr).not.to.match(/Deposited/);
    const id = /deposit ([0-9a-f-]{36})/.exec(run.stderr)?.[1] as string;
    expect(bodyOf(sentTo('POST', `/account/${account}/deposit`).at(-1))).to.deep.equal({
      amount: 5,
      currency: 'USD',
      payment_method: 'pm_card_chargeDeclined',
    });

    await sleep(1_000);
    const api = client();
    expect(await api.transactions.get(id)).to.include({
      status: 'pending',
      failure_reason: 'Your card was declined.',
    });
    expect(await api.balances.get(account)).to.include({ balance: 0, available_balance: 0 });

    const json = await payments('deposit', account, '6', '--pay-with', 'pm_card_chargeDeclined', '--json');
    expect(json.code, json.stderr).to.equal(1);
    const shown = JSON.parse(json.stdout) as { transaction: { status: string; failure_reason: string } };
    expect(shown.transaction).to.include({ status: 'pending', failure_reason: 'Your card was declined.' });
  });

  it('deposits with a good card and prints the documented line', async () => {
    const run = await payments('deposit', account, '5', '--pay-with', 'pm_card_visa');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal(`Deposited 5.00 to account ${account}. New balance: 5.00\n`);
  });

  it('sends --reference and every --metadata pair with a deposit, a withdrawal and a transfer', async () => {
    const other = (await payments('account', 'create', 'USD')).stdout.trim();
    const deposit = await payments(
      'deposit',
      account,
      '20',
      '--reference',
      'order-8812',
      '--metadata',
      'order=8812',
      '--metadata',
      'note=a=b',
    );
    expect(deposit.code, deposit.stderr).to.equal(0);
    expect(bodyOf(sentTo('POST', `/account/${account}/deposit`).at(-1))).to.deep.equal({
      amount: 20,
      currency: 'USD',
      metadata: { order: '8812', note: 'a=b' },
      reference: 'order-8812',
    });

    const withdraw = await payments('withdraw', account, '2', '--reference', 'payout-1', '--metadata', 'k=v');
    expect(withdraw.code, withdraw.stderr).to.equal(0);
    expect(bodyOf(sentTo('POST', `/account/${account}/withdraw`).at(-1))).to.deep.equal({
      amount: 2,
      currency: 'USD',
      metadata: { k: 'v' },
      reference: 'payout-1',
    });

    const transfer = await payments('transfer', account, other, '3', '--metadata', 'invoice=A-1');
    expect(transfer.code, transfer.stderr).to.equal(0);
    expect(bodyOf(sentTo('POST', `/account/${account}/transfer`).at(-1))).to.deep.equal({
      to_account_id: other,
      amount: 3,
      currency: 'USD',
      metadata: { invoice: 'A-1' },
    });

    // Kept on the transaction, and found by them.
    const found = await client().transactions.listPage({ reference: 'order-8812' });
    expect(found.data).to.have.length(1);
    expect(found.data[0]?.metadata).to.deep.equal({ order: '8812', note: 'a=b' });

    // The same reference for another deposit is the API's 409, shown as a business-rule refusal.
    const reused = await payments('deposit', account, '21', '--reference', 'order-8812');
    expect(reused.code).to.equal(5);
    expect(reused.stderr).to.match(/reference/i);
    const malformed = await payments('deposit', account, '1', '--metadata', 'no-equals-sign');
    expect(malformed.code).to.equal(2);
    expect(malformed.stderr).to.match(/key=value/);
  });
});
