import { expect } from 'chai';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

interface SystemBalance {
  code: string;
  currency: string;
  balance: string;
}

describe('ledger fees (v1.1)', () => {
  let alice: TestUser;

  const ledger = useLedgerHarness(
    {
      env: {
        FEE_DEPOSIT_FIXED: '0.30',
        FEE_WITHDRAWAL_FIXED: '0.25',
        FEE_WITHDRAWAL_PERCENT: '1',
        FEE_TRANSFER_PERCENT: '0.5',
      },
    },
    { booksBalance: true },
  );
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const v11 = { 'x-api-version': '1.1' };
  const post = (path: string, body: unknown, headers: Record<string, string> = v11) =>
    ledger.call('POST', path, { user: alice, body, headers });
  const systemBalance = async (code: string, currency: string) => {
    const audit = await ledger.audit();
    const row = (audit.system_balances as SystemBalance[]).find(
      (b) => b.code === code && b.currency === currency,
    );
    return row ? Number(row.balance) : 0;
  };
  const feeRevenue = (currency: string) => systemBalance('fee_revenue', currency);

  it('takes the deposit fee from the credit and books it to fee revenue', async () => {
    const account = await ledger.openAccount(alice);
    const revenueBefore = await feeRevenue('USD');
    const response = await post(`/account/${account.id}/deposit`, { amount: 10, currency: 'USD' });
    expect(response.body).to.include({ amount: 10, fee: 0.3 });
    const v10 = await ledger.call('GET', `/transaction/${response.body.id}`, { user: alice });
    expect(v10.body).to.not.have.property('fee');
    await ledger.confirm(response.body.id);
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 9.7, available_balance: 9.7 });
    expect((await feeRevenue('USD')) - revenueBefore).to.equal(30);
  });

  it('refuses a deposit no larger than its fee', async () => {
    const account = await ledger.openAccount(alice);
    const response = await post(`/account/${account.id}/deposit`, { amount: 0.3, currency: 'USD' });
    expect(response.status).to.equal(422);
    expect(response.body.code).to.equal('INVALID_AMOUNT');
  });

  it('holds amount plus fee for a withdrawal and debits both on payout', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 20.3);
    const response = await post(`/account/${account.id}/withdraw`, { amount: 10, currency: 'USD' });
    // 0.25 fixed + 1% of 10.00.
    expect(response.body.fee).to.equal(0.35);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 20, available_balance: 9.65 });
    await ledger.confirm(response.body.id, 'completed', {
      amount: 1000,
      currency: 'USD',
      movement: 'payout',
    });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 9.65, available_balance: 9.65 });
  });

  it('refuses a withdrawal the balance covers but not with its fee', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 10.3);
    const response = await post(`/account/${account.id}/withdraw`, { amount: 10, currency: 'USD' });
    expect(response.status).to.equal(422);
    expect(response.body.code).to.equal('INSUFFICIENT_FUNDS');
  });

  it('rounds percentage fees up in minor units, so splitting a transfer never avoids its fee', async () => {
    const bob = ledger.newUser();
    const source = await ledger.openAccount(alice);
    const destination = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 50.3);
    // 0.5% of 33.33 = 0.16665 → 0.17; of 1.00 = 0.005 → 0.01; of 0.99 = 0.00495 → 0.01, not 0.
    const cases: [number, number][] = [
      [33.33, 0.17],
      [1, 0.01],
      [0.99, 0.01],
    ];
    for (const [amount, fee] of cases) {
      const response = await post(`/account/${source.id}/transfer`, {
        to_account_id: destination.id,
        amount,
        currency: 'USD',
      });
      expect(response.body.fee, String(amount)).to.equal(fee);
      await ledger.waitForStatus(alice, response.body.id, 'completed');
    }
    expect((await ledger.balanceOf(bob, destination.id)).balance).to.equal(35.32);
    // Funded 50.30 less the 0.30 deposit fee, then 35.32 sent and 0.19 in fees.
    expect((await ledger.balanceOf(alice, source.id)).balance).to.equal(14.49);
  });

  it('charges a cross-currency transfer fee in the source currency and books both sides through FX', async () => {
    const bob = ledger.newUser();
    const source = await ledger.openAccount(alice);
    const euros = await ledger.openAccount(bob, 'EUR');
    await ledger.fund(alice, source.id, 20.3);
    const fxBefore = await systemBalance('fx', 'EUR');
    const response = await post(`/account/${source.id}/transfer`, {
      to_account_id: euros.id,
      amount: 10,
      currency: 'USD',
    });
    expect(response.body).to.include({ fee: 0.05, exchange_rate: 0.9, converted_amount: 9 });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect((await ledger.balanceOf(alice, source.id)).balance).to.equal(9.95);
    expect((await ledger.balanceOf(bob, euros.id)).balance).to.equal(9);
    expect((await systemBalance('fx', 'EUR')) - fxBefore).to.equal(-900);
  });

  it('applies a fixed fee in the account currency: a fraction of a yen costs one yen, three decimals in KWD', async () => {
    const yen = await ledger.openAccount(alice, 'JPY');
    const dinars = await ledger.openAccount(alice, 'KWD');
    const yenDeposit = await post(`/account/${yen.id}/deposit`, { amount: 1000, currency: 'JPY' });
    const dinarDeposit = await post(`/account/${dinars.id}/deposit`, { amount: 1, currency: 'KWD' });
    expect(yenDeposit.body.fee).to.equal(1);
    expect(dinarDeposit.body.fee).to.equal(0.3);
  });
});
