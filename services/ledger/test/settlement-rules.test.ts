import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import {
  aTransaction,
  ACCOUNT_ID as SOURCE,
  COUNTERPARTY_ACCOUNT_ID as DESTINATION,
} from '@payments/test-support';
import { decideConfirmation } from '../src/domain/confirmation.js';
import {
  accountChangesOf,
  assertBalanced,
  completionOf,
  releaseOf,
  type Leg,
} from '../src/domain/settlement.js';
import { canRead, canTransition, holdOf } from '../src/domain/transaction.js';

const sumsByCurrency = (legs: Leg[]) => {
  const sums: Record<string, bigint> = {};
  for (const leg of legs) sums[leg.currency] = (sums[leg.currency] ?? 0n) + leg.amount;
  return sums;
};

describe('settlement rules', () => {
  it('completes a deposit: account credited net of fee, clearing debited, fee to revenue', () => {
    const settlement = completionOf(aTransaction({ fee: toMinorUnits(30n) }));
    expect(sumsByCurrency(settlement.legs)).to.deep.equal({ USD: 0n });
    expect(accountChangesOf(settlement)).to.deep.equal([
      { accountId: SOURCE, balance: 970n, available: 970n },
    ]);
    expect(settlement.legs.map((l) => [l.target, l.amount])).to.deep.include.members([
      [{ kind: 'system', code: 'provider_clearing' }, -1000n],
      [{ kind: 'system', code: 'fee_revenue' }, 30n],
    ]);
  });

  it('completes a withdrawal: balance debited with the fee, the hold released, available unchanged', () => {
    const settlement = completionOf(aTransaction({ type: 'withdrawal', fee: toMinorUnits(35n) }));
    expect(sumsByCurrency(settlement.legs)).to.deep.equal({ USD: 0n });
    expect(accountChangesOf(settlement)).to.deep.equal([
      { accountId: SOURCE, balance: -1035n, available: 0n },
    ]);
  });

  it('completes a same-currency transfer between two accounts', () => {
    const settlement = completionOf(
      aTransaction({ type: 'transfer', fee: toMinorUnits(5n), counterpartyAccountId: DESTINATION }),
      { accountId: DESTINATION, currency: 'USD' },
    );
    expect(sumsByCurrency(settlement.legs)).to.deep.equal({ USD: 0n });
    expect(accountChangesOf(settlement)).to.deep.equal([
      { accountId: SOURCE, balance: -1005n, available: 0n },
      { accountId: DESTINATION, balance: 1000n, available: 1000n },
    ]);
  });

  it('completes a cross-currency transfer through FX, balanced in each currency', () => {
    const settlement = completionOf(
      aTransaction({
        type: 'transfer',
        counterpartyAccountId: DESTINATION,
        exchangeRate: '0.9',
        convertedAmount: toMinorUnits(900n),
        convertedCurrency: 'EUR',
      }),
      { accountId: DESTINATION, currency: 'EUR' },
    );
    expect(sumsByCurrency(settlement.legs)).to.deep.equal({ USD: 0n, EUR: 0n });
    expect(accountChangesOf(settlement)).to.deep.include({
      accountId: DESTINATION,
      balance: 900n,
      available: 900n,
    });
  });

  it('refuses to settle a transfer without its destination or conversion', () => {
    const transfer = aTransaction({ type: 'transfer', counterpartyAccountId: DESTINATION });
    expect(() => completionOf(transfer)).to.throw(/destination/);
    expect(() => completionOf(transfer, { accountId: DESTINATION, currency: 'EUR' })).to.throw(/conversion/);
  });

  it('releases exactly the hold on failure and writes no entries', () => {
    expect(releaseOf(aTransaction())).to.deep.equal({ legs: [], release: null });
    const failed = releaseOf(aTransaction({ type: 'withdrawal', fee: toMinorUnits(35n) }));
    expect(failed.legs).to.deep.equal([]);
    expect(accountChangesOf(failed)).to.deep.equal([{ accountId: SOURCE, balance: 0n, available: 1035n }]);
  });

  it('lists account changes in id order, the lock order', () => {
    const settlement = completionOf(
      aTransaction({ type: 'transfer', accountId: DESTINATION, counterpartyAccountId: SOURCE }),
      { accountId: SOURCE, currency: 'USD' },
    );
    expect(accountChangesOf(settlement).map((c) => c.accountId)).to.deep.equal([SOURCE, DESTINATION]);
  });

  it('rejects legs that do not balance', () => {
    expect(() =>
      assertBalanced([{ target: { kind: 'account', accountId: SOURCE }, currency: 'USD', amount: 1n }]),
    ).to.throw(/unbalanced/);
  });
});

describe('transaction state rules', () => {
  it('moves only pending transactions, and only into terminal states', () => {
    expect(canTransition('pending', 'completed')).to.equal(true);
    expect(canTransition('pending', 'failed')).to.equal(true);
    expect(canTransition('pending', 'canceled')).to.equal(true);
    expect(canTransition('pending', 'pending')).to.equal(false);
    for (const from of ['completed', 'failed', 'canceled'] as const) {
      for (const to of ['pending', 'completed', 'failed', 'canceled'] as const) {
        expect(canTransition(from, to), `${from} → ${to}`).to.equal(false);
      }
    }
  });

  it('holds amount plus fee for withdrawals and transfers, nothing for deposits', () => {
    expect(holdOf(aTransaction({ fee: toMinorUnits(10n) }))).to.equal(0n);
    expect(holdOf(aTransaction({ type: 'withdrawal', fee: toMinorUnits(10n) }))).to.equal(1010n);
    expect(holdOf(aTransaction({ type: 'transfer', fee: toMinorUnits(10n) }))).to.equal(1010n);
  });

  it('lets the owner, an admin and the receiver of a completed transfer read a transaction', () => {
    const transfer = aTransaction({ type: 'transfer', counterpartyUserId: 'user-b' });
    expect(canRead(transfer, { userId: 'user-a', role: 'user' })).to.equal(true);
    expect(canRead(transfer, { userId: 'admin', role: 'admin' })).to.equal(true);
    expect(canRead(transfer, { userId: 'user-b', role: 'user' })).to.equal(false);
    expect(canRead({ ...transfer, status: 'completed' }, { userId: 'user-b', role: 'user' })).to.equal(true);
    expect(canRead({ ...transfer, status: 'completed' }, { userId: 'user-c', role: 'user' })).to.equal(false);
  });
});

describe('confirmation decisions', () => {
  it('completes a pending deposit on a matching confirmation', () => {
    expect(
      decideConfirmation(aTransaction(), { status: 'completed', amount: 1000, currency: 'USD' }),
    ).to.deep.equal({ action: 'complete' });
    expect(
      decideConfirmation(aTransaction(), {
        status: 'completed',
        amount: 1000,
        currency: 'usd',
        movement: 'payment',
      }),
    ).to.deep.equal({ action: 'complete' });
  });

  it('fails on a reported failure, or when amount or currency disagree', () => {
    expect(decideConfirmation(aTransaction(), { status: 'failed', failureReason: 'declined' })).to.deep.equal(
      {
        action: 'fail',
        reason: 'declined',
      },
    );
    expect(
      decideConfirmation(aTransaction(), { status: 'completed', amount: 999, currency: 'USD' }).action,
    ).to.equal('fail');
    expect(
      decideConfirmation(aTransaction(), { status: 'completed', amount: 1000, currency: 'EUR' }).action,
    ).to.equal('fail');
  });

  it('fails a completion that does not say the amount and currency, for deposits and payouts alike', () => {
    for (const type of ['deposit', 'withdrawal'] as const) {
      for (const confirmation of [{}, { amount: 1000 }, { currency: 'USD' }]) {
        expect(
          decideConfirmation(aTransaction({ type }), { status: 'completed', ...confirmation }),
        ).to.deep.equal({
          action: 'fail',
          reason: 'The payment confirmation did not say which amount and currency were paid',
        });
      }
    }
    // A reported failure needs neither: it moves no money.
    expect(decideConfirmation(aTransaction(), { status: 'failed' }).action).to.equal('fail');
  });

  it('ignores terminal transactions, transfers and the wrong kind of movement', () => {
    for (const status of ['completed', 'failed', 'canceled'] as const) {
      expect(decideConfirmation(aTransaction({ status }), { status: 'completed' }).action).to.equal('ignore');
    }
    // A repeat of the booked outcome is a duplicate; a completion that does not say what it captured contradicts.
    expect(
      decideConfirmation(aTransaction({ status: 'completed' }), { status: 'completed' }),
    ).not.to.have.property('contradicts');
    expect(decideConfirmation(aTransaction({ status: 'failed' }), { status: 'completed' })).to.include({
      action: 'ignore',
      contradicts: true,
    });
    expect(
      decideConfirmation(aTransaction({ status: 'completed' }), { status: 'failed', movement: 'payout' }),
    ).not.to.have.property('contradicts');
    expect(
      decideConfirmation(aTransaction({ type: 'withdrawal', status: 'canceled' }), { status: 'failed' }),
    ).not.to.have.property('contradicts');
    expect(decideConfirmation(aTransaction({ type: 'transfer' }), { status: 'completed' }).action).to.equal(
      'ignore',
    );
    expect(decideConfirmation(aTransaction(), { status: 'completed', movement: 'payout' }).action).to.equal(
      'ignore',
    );
    expect(
      decideConfirmation(aTransaction({ type: 'withdrawal' }), { status: 'completed', movement: 'payment' })
        .action,
    ).to.equal('ignore');
  });
  it('keeps a deposit pending on a failed attempt, recording why, and ignores one that comes after it ended', () => {
    expect(
      decideConfirmation(aTransaction(), {
        status: 'attempt_failed',
        failureReason: 'Your card was declined.',
      }),
    ).to.deep.equal({ action: 'note', reason: 'Your card was declined.' });
    expect(decideConfirmation(aTransaction(), { status: 'attempt_failed' })).to.deep.equal({
      action: 'note',
      reason: 'A payment attempt failed at the provider',
    });
    for (const status of ['completed', 'failed', 'canceled'] as const) {
      const decision = decideConfirmation(aTransaction({ status }), { status: 'attempt_failed' });
      expect(decision.action).to.equal('ignore');
      expect(decision).not.to.have.property('contradicts');
    }
  });

  it('cancels a pending deposit the provider canceled; a cancellation after a completion contradicts it', () => {
    expect(
      decideConfirmation(aTransaction(), {
        status: 'canceled',
        failureReason: 'canceled at the provider (abandoned)',
      }),
    ).to.deep.equal({ action: 'cancel', reason: 'canceled at the provider (abandoned)' });
    expect(decideConfirmation(aTransaction({ status: 'completed' }), { status: 'canceled' })).to.include({
      action: 'ignore',
      contradicts: true,
    });
    expect(
      decideConfirmation(aTransaction({ status: 'failed' }), { status: 'canceled' }),
    ).not.to.have.property('contradicts');
  });
});

describe('money the provider gives back against the books', () => {
  it('credits back a paid payout that the provider reports failed', () => {
    expect(
      decideConfirmation(aTransaction({ type: 'withdrawal', status: 'completed' }), {
        status: 'failed',
        movement: 'payout',
      }),
    ).to.include({ action: 'credit_back', kind: 'payout_returned' });
  });

  it('credits a payment captured after its deposit ended, only for the amount and currency of the deposit', () => {
    for (const status of ['failed', 'canceled'] as const) {
      expect(
        decideConfirmation(aTransaction({ status }), { status: 'completed', amount: 1000, currency: 'usd' }),
      ).to.include({ action: 'credit_back', kind: 'late_payment' });
    }
    expect(
      decideConfirmation(aTransaction({ status: 'failed' }), {
        status: 'completed',
        amount: 999,
        currency: 'USD',
      }),
    ).to.include({ action: 'ignore', contradicts: true });
    expect(decideConfirmation(aTransaction({ status: 'canceled' }), { status: 'completed' })).to.include({
      action: 'ignore',
      contradicts: true,
    });
  });

  it('leaves to an operator a payout paid after the ledger gave its hold back', () => {
    expect(
      decideConfirmation(aTransaction({ type: 'withdrawal', status: 'canceled' }), { status: 'completed' }),
    ).to.include({ action: 'ignore', contradicts: true });
  });

  it('books a returned payout as its amount back from clearing, and a late payment as its deposit would have been', () => {
    const returned = completionOf(
      aTransaction({ type: 'reversal', reversalReason: 'payout_returned', amount: toMinorUnits(1000n) }),
    );
    expect(returned.legs.map((leg) => [leg.target, leg.amount])).to.deep.equal([
      [{ kind: 'account', accountId: SOURCE }, 1000n],
      [{ kind: 'system', code: 'provider_clearing' }, -1000n],
    ]);
    const late = completionOf(
      aTransaction({
        type: 'reversal',
        reversalReason: 'late_payment',
        amount: toMinorUnits(1000n),
        fee: toMinorUnits(30n),
      }),
    );
    expect(late.legs.map((leg) => [leg.target, leg.amount])).to.deep.equal([
      [{ kind: 'account', accountId: SOURCE }, 970n],
      [{ kind: 'system', code: 'provider_clearing' }, -1000n],
      [{ kind: 'system', code: 'fee_revenue' }, 30n],
    ]);
    expect(late.mayOverdraw).not.to.equal(true);
  });
});
