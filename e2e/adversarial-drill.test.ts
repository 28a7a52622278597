import { expect } from 'chai';
import {
  answersCheck,
  checkAdversarialBooks,
  clearingCheck,
  conversionCheck,
  deletionCheck,
  discrepanciesOf,
  feeCheck,
  latePayoutCheck,
  leftoversCheck,
  partyValueCheck,
  platformLossCheck,
  providerBooksCheck,
  referenceValuation,
  runAdversarialDrill,
  startAdversarialSystem,
  totalValueCheck,
  type AdversarialRecord,
  type DrillReport,
  type Valuation,
} from '@payments/bench';

const usd = (cents: number) => new Map([['USD', BigInt(cents)]]);
const none = new Map<string, bigint>();
const failing = (report: DrillReport) =>
  report.checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`);

describe('adversarial drill (pnpm drill): its checks catch what they are for', () => {
  let valuation: Valuation;

  before(async () => {
    valuation = await referenceValuation('USD');
  });

  it('flags a client holding more, at the reference rates, than it deposited less what it withdrew', () => {
    // 0.99 USD and 1 JPY (0.0064 USD at 157.21) is less than the 1.00 USD paid in; 1.00 USD and 1 JPY is more.
    const honest = {
      name: 'honest',
      entered: usd(100),
      exited: none,
      held: new Map([
        ['USD', 99n],
        ['JPY', 1n],
      ]),
    };
    const gainer = {
      name: 'gainer',
      entered: usd(100),
      exited: none,
      held: new Map([
        ['USD', 100n],
        ['JPY', 1n],
      ]),
    };
    expect(partyValueCheck(valuation, [honest]).discrepancies).to.equal(0);
    const found = partyValueCheck(valuation, [honest, gainer]);
    expect(found.discrepancies).to.equal(1);
    expect(found.detail).to.include('gainer');
    // Paid out counts against what may be held: 0.9964 USD held is more than 1.00 − 0.01.
    expect(partyValueCheck(valuation, [{ ...honest, exited: usd(1) }]).discrepancies).to.equal(1);
    expect(totalValueCheck(valuation, [honest], usd(100)).discrepancies).to.equal(0);
    expect(totalValueCheck(valuation, [honest], usd(101)).discrepancies).to.equal(1);
  });

  it('flags the FX cycling attack: 0.01 USD credited as 2 JPY (half up), not as 1 (down)', () => {
    const conversion = (convertedAmount: bigint) => ({
      id: 'c',
      amount: 1n,
      currency: 'USD',
      convertedAmount,
      convertedCurrency: 'JPY',
    });
    expect(conversionCheck(valuation, Array(20).fill(conversion(1n))).discrepancies).to.equal(0);
    expect(conversionCheck(valuation, Array(20).fill(conversion(2n))).discrepancies).to.equal(20);
    // Back: 40 JPY is worth 0.2544 USD; crediting 0.25 is fine, 0.26 is not.
    const back = (cents: bigint) => ({
      id: 'b',
      amount: 40n,
      currency: 'JPY',
      convertedAmount: cents,
      convertedCurrency: 'USD',
    });
    expect(conversionCheck(valuation, [back(25n)]).discrepancies).to.equal(0);
    expect(conversionCheck(valuation, [back(26n)]).discrepancies).to.equal(1);
  });

  it('flags pieces that paid less than their percentage fee', () => {
    const fees = { deposit: '0.5', transfer: '0.25', withdrawal: '0' };
    const piece = (fee: bigint) => ({ type: 'deposit' as const, amount: 99n, fee });
    // 0.5 % of 0.99 is 0.00495: rounded half up that was 0, ten pieces free of the fee the whole pays.
    expect(feeCheck(fees, Array(10).fill(piece(1n))).discrepancies).to.equal(0);
    expect(feeCheck(fees, Array(10).fill(piece(0n))).discrepancies).to.equal(10);
    expect(feeCheck(fees, [{ type: 'withdrawal', amount: 500n, fee: 0n }]).discrepancies).to.equal(0);
  });

  it('flags provider clearing that does not mirror what the provider moved, and answers not booked once', () => {
    const party = { entered: usd(1000), exited: usd(300) };
    expect(clearingCheck(valuation, [party], usd(-700)).discrepancies).to.equal(0);
    expect(clearingCheck(valuation, [party], usd(-800)).discrepancies).to.equal(1);
    const answer = { transactionId: 't', accountId: 'a', kind: 'deposit' as const, expectedDelta: 995n };
    expect(answersCheck([answer], new Map([['t', { count: 1, sum: 995n }]])).discrepancies).to.equal(0);
    expect(answersCheck([answer], new Map([['t', { count: 2, sum: 1990n }]])).discrepancies).to.equal(1);
    expect(answersCheck([answer], new Map()).discrepancies).to.equal(1);
  });

  it('flags provider books that differ from provider clearing, and money left half-way at the provider', () => {
    const clearing = new Map([
      ['USD', -700n],
      ['JPY', -8_000n],
    ]);
    const platform = new Map([
      ['USD', 700n],
      ['JPY', 8_000n],
    ]);
    expect(providerBooksCheck(valuation, platform, clearing).discrepancies).to.equal(0);
    expect(providerBooksCheck(valuation, new Map([['USD', 700n]]), clearing).discrepancies).to.equal(1);
    const settled = { pendingPayouts: 0, unattributed: 0, leftOnConnected: new Map([['USD', 0n]]) };
    expect(leftoversCheck(valuation, settled).discrepancies).to.equal(0);
    const stranded = { ...settled, leftOnConnected: new Map([['EUR', 1_800n]]) };
    expect(leftoversCheck(valuation, stranded).discrepancies).to.equal(1);
    expect(leftoversCheck(valuation, { ...settled, pendingPayouts: 2 }).discrepancies).to.equal(2);
  });

  it('flags a late payout released by a timer, answered before it was flagged, or debited twice', () => {
    const payout = { id: 'w', outcome: 'paid' as const, seenFlaggedAt: 2_000, answeredAt: 3_000 };
    const state = (status: string, flaggedAt: number | null, count: number) =>
      new Map([['w', { status, flaggedAt, booking: { count, sum: -500n * BigInt(count) } }]]);
    expect(latePayoutCheck([payout], state('completed', 1_900, 1)).discrepancies).to.equal(0);
    expect(latePayoutCheck([payout], state('canceled', 1_900, 0)).discrepancies).to.equal(1);
    expect(latePayoutCheck([payout], state('completed', 3_500, 1)).discrepancies).to.equal(1);
    expect(latePayoutCheck([payout], state('completed', 1_900, 2)).discrepancies).to.equal(1);
    const failed = { ...payout, outcome: 'failed' as const };
    expect(latePayoutCheck([failed], state('failed', 1_900, 0)).discrepancies).to.equal(0);
  });

  it("flags a deleted user's refunds booked as losses twice, for another amount, or not at all", () => {
    // Two refunds of 10.00 and 5.00; the first one's event lost, the second's total books both at once.
    const refunded = [{ transactionId: 'd', currency: 'USD', refunded: 1_500n, refunds: 2 }];
    const loss = (amount: bigint) => ({ depositId: 'd', currency: 'USD', amount, fee: 0n });
    const accounts = (cents: number) => usd(-cents);
    expect(platformLossCheck(valuation, refunded, [loss(1_500n)], accounts(1_500)).discrepancies).to.equal(0);
    expect(
      platformLossCheck(valuation, refunded, [loss(1_000n), loss(500n)], accounts(1_500)).discrepancies,
    ).to.equal(0);
    expect(
      platformLossCheck(valuation, refunded, [loss(1_000n), loss(500n), loss(500n)], accounts(2_000))
        .discrepancies,
    ).to.be.greaterThan(0);
    expect(platformLossCheck(valuation, refunded, [loss(1_000n)], accounts(1_000)).discrepancies).to.equal(1);
    expect(platformLossCheck(valuation, refunded, [], none).discrepancies).to.equal(1);
    expect(platformLossCheck(valuation, refunded, [loss(1_500n)], accounts(1_000)).discrepancies).to.equal(1);
  });

  it('flags a user deleted with money on an account, or whose account survived', () => {
    const deleted = [{ userId: 'u', accountIds: ['a'] }];
    expect(deletionCheck(deleted, new Map([['a', 0n]]), new Set()).discrepancies).to.equal(0);
    expect(deletionCheck(deleted, new Map([['a', 500n]]), new Set()).discrepancies).to.equal(1);
    expect(deletionCheck(deleted, new Map(), new Set(['a'])).discrepancies).to.equal(1);
  });
});

describe('adversarial drill against a running system', function () {
  this.timeout(180_000);
  let system: Awaited<ReturnType<typeof startAdversarialSystem>>;
  let report: DrillReport;
  let record: AdversarialRecord;

  before(async () => {
    system = await startAdversarialSystem({ seconds: 3, settleSeconds: 30, log: () => undefined });
    ({ report, record } = await runAdversarialDrill(system.context));
  });

  after(async () => {
    await system?.stop();
  });

  it('mounts every attack alongside honest traffic and ends with the audit clean and no value created', () => {
    expect(failing(report), JSON.stringify(report.operations)).to.deep.equal([]);
    expect(discrepanciesOf(report)).to.equal(0);
    for (const attack of ['FX cycling', 'fee splitting', 'late payouts', 'deletion races']) {
      expect(report.operations[`${attack}: attack requests`], attack).to.be.greaterThan(0);
    }
    expect(report.operations['honest: transfers accepted']).to.be.greaterThan(0);
    expect(record.provider.latePayouts.length, 'payouts answered after their expiry').to.be.greaterThan(0);
    expect(record.deleted.length, 'users deleted in a race').to.be.greaterThan(0);
    expect(report.checks.map((check) => check.name)).to.include.members([
      'ledger audit (/internal/audit)',
      "sum of all users' value not increased",
      'unclaimed funds stay 0',
    ]);
  });

  it('catches a deposit credited without the provider’s money, which the ledger audit alone passes', async () => {
    const victim = record.parties.find((party) => party.kind === 'fx');
    const dollars = victim?.accounts.find((account) => account.currency === 'USD');
    expect(dollars, 'an FX cycler’s USD account').to.not.equal(undefined);
    // Balanced entries (account +1,000.00, provider clearing −1,000.00, no fee): books that balance, money
    // nobody paid in, more than all the fees and rounding the house kept.
    await system.context.ledgerDb.fundAccounts([dollars?.id as string], 100_000n);
    const checks = await checkAdversarialBooks(system.context, record);
    const failed = checks.filter((check) => !check.ok).map((check) => check.name);
    expect(failed).to.not.include('ledger audit (/internal/audit)');
    expect(failed).to.include.members([
      'provider clearing = what the provider paid out − took in',
      "the provider's books = the ledger's provider-clearing accounts (per currency)",
      'no client gained value (each holds ≤ deposited − withdrawn, at reference rates)',
      "sum of all users' value not increased",
      'no fee below its percentage (fee splitting)',
    ]);
  });
});
