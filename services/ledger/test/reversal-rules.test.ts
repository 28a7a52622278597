import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import { aCompletedDeposit, ACCOUNT_ID as ACCOUNT, anAdjustment as adjustment } from '@payments/test-support';
import { decideReversal, disputeHoldOf, feeShareOf } from '../src/domain/reversal.js';
import { accountChangesOf, completionOf } from '../src/domain/settlement.js';
import type { Transaction } from '../src/domain/transaction.js';

/** What reversals take back from: a completed deposit of 100.00 USD with a 2.99 fee. */
const transaction = (over: Partial<Transaction> = {}) =>
  aCompletedDeposit({ amount: toMinorUnits(10_000n), fee: toMinorUnits(299n), ...over });
const reversal = (over: Partial<Transaction>) =>
  transaction({ type: 'reversal', originalTransactionId: 'x', heldAmount: toMinorUnits(0n), ...over });

describe('reversal rules', () => {
  it('gives back the deposit fee in proportion, so partial reversals add up to the whole fee exactly', () => {
    const deposit = transaction();
    const parts = [1n, 3333n, 3333n, 3333n];
    let before = 0n;
    let fees = 0n;
    for (const part of parts) {
      fees += feeShareOf(deposit, before, part);
      before += part;
    }
    expect(fees).to.equal(299n);
    expect(feeShareOf(deposit, 0n, 10_000n)).to.equal(299n);
  });

  it('reverses a deposit paid after it ended once its late payment is credited, and nothing before', () => {
    const canceled = transaction({ status: 'canceled', completedAt: null });
    expect(decideReversal(canceled, [], adjustment('refund', 4000n)).action).to.equal('ignore');
    const late = reversal({
      reversalReason: 'late_payment',
      status: 'completed',
      amount: toMinorUnits(10_000n),
    });
    const refund = decideReversal(canceled, [late], adjustment('refund', 4000n));
    expect(refund).to.deep.include({ action: 'create' });
    expect(refund.action === 'create' && refund.reversal).to.deep.include({
      reason: 'refund',
      status: 'completed',
      amount: 4000n,
    });
    // Up to what the late payment credited, never more.
    const lost = decideReversal(canceled, [late], adjustment('dispute_lost', 50_000n, 'dp_9'));
    expect(lost.action === 'create' && lost.reversal.amount).to.equal(10_000n);
  });

  it('books a reversal as the mirror of its deposit: user debited amount − fee, fee and clearing given back', () => {
    const booked = completionOf(reversal({ amount: toMinorUnits(5000n), fee: toMinorUnits(149n) }));
    expect(booked.mayOverdraw).to.equal(true);
    expect(booked.legs.map((leg) => [leg.target, leg.amount])).to.deep.equal([
      [{ kind: 'account', accountId: ACCOUNT }, -4851n],
      [{ kind: 'system', code: 'fee_revenue' }, -149n],
      [{ kind: 'system', code: 'provider_clearing' }, 5000n],
    ]);
    const held = completionOf(
      reversal({ amount: toMinorUnits(5000n), fee: toMinorUnits(0n), heldAmount: toMinorUnits(3000n) }),
    );
    expect(accountChangesOf(held)).to.deep.equal([
      { accountId: ACCOUNT, balance: -5000n, available: -2000n },
    ]);
  });

  it('reverses a refund by what its total adds, capped at what is left of the deposit', () => {
    const deposit = transaction();
    const done = [reversal({ reversalReason: 'refund', amount: toMinorUnits(3000n) })];
    const next = decideReversal(deposit, done, adjustment('refund', 5000n));
    expect(next).to.deep.include({ action: 'create' });
    expect(next.action === 'create' && [next.reversal.amount, next.reversal.key]).to.deep.equal([
      2000n,
      'refund:5000',
    ]);
    expect(decideReversal(deposit, done, adjustment('refund', 3000n)).action).to.equal('ignore');
    const capped = decideReversal(deposit, done, adjustment('refund', 50_000n));
    expect(capped.action === 'create' && capped.reversal.amount).to.equal(7000n);
  });

  it('counts an open dispute as reversed, and ignores a dispute for a deposit already reversed in full', () => {
    const deposit = transaction();
    const open = reversal({
      reversalReason: 'dispute',
      status: 'pending',
      amount: toMinorUnits(10_000n),
      paymentId: 'dp_1',
    });
    expect(decideReversal(deposit, [open], adjustment('refund', 100n)).action).to.equal('ignore');
    expect(decideReversal(deposit, [open], adjustment('dispute_opened', 100n, 'dp_2')).action).to.equal(
      'ignore',
    );
    expect(decideReversal(deposit, [open], adjustment('dispute_lost', 10_000n))).to.deep.include({
      action: 'finish',
      status: 'completed',
    });
    expect(decideReversal(deposit, [open], adjustment('dispute_won', 10_000n))).to.deep.include({
      action: 'finish',
      status: 'canceled',
    });
  });

  it('waits for a pending deposit and ignores failed ones, transfers and other currencies', () => {
    expect(decideReversal(transaction({ status: 'pending' }), [], adjustment('refund', 1n)).action).to.equal(
      'retry',
    );
    expect(decideReversal(transaction({ status: 'failed' }), [], adjustment('refund', 1n)).action).to.equal(
      'ignore',
    );
    expect(decideReversal(transaction({ type: 'transfer' }), [], adjustment('refund', 1n)).action).to.equal(
      'ignore',
    );
    expect(
      decideReversal(transaction(), [], { ...adjustment('refund', 1n), currency: 'EUR' }).action,
    ).to.equal('ignore');
    expect(decideReversal(null, [], adjustment('refund', 1n)).action).to.equal('ignore');
  });

  it('holds what is available of a disputed amount, never below zero', () => {
    expect(disputeHoldOf(500n, 1000n)).to.equal(500n);
    expect(disputeHoldOf(500n, 200n)).to.equal(200n);
    expect(disputeHoldOf(500n, -50n)).to.equal(0n);
  });

  it('counts a requested refund while pending, so the provider’s total books nothing more for it', () => {
    const deposit = transaction();
    const pending = reversal({
      id: 'refund-1',
      reversalReason: 'refund',
      status: 'pending',
      completedAt: null,
      amount: toMinorUnits(3000n),
    });
    // charge.refunded with the total that includes the pending refund: nothing to book.
    expect(decideReversal(deposit, [pending], adjustment('refund', 3000n)).action).to.equal('ignore');
    // A refund made elsewhere on top of it: only what it adds.
    const more = decideReversal(deposit, [pending], adjustment('refund', 4000n));
    expect(more.action === 'create' && [more.reversal.amount, more.reversal.key]).to.deep.equal([
      1000n,
      'refund:4000',
    ]);
  });

  it('books a requested refund once when the provider confirms it, and fails it once when it cannot', () => {
    const deposit = transaction();
    const pending = reversal({
      id: 'refund-1',
      reversalReason: 'refund',
      status: 'pending',
      completedAt: null,
      amount: toMinorUnits(3000n),
    });
    const confirmed = { ...adjustment('refund_succeeded', 3000n, 're_1'), refundId: 'refund-1' };
    expect(decideReversal(deposit, [pending], confirmed)).to.deep.include({
      action: 'finish',
      status: 'completed',
    });
    // The answer and the event both confirm it: the second finds it booked.
    const booked = { ...pending, status: 'completed' as const };
    expect(decideReversal(deposit, [booked], confirmed).action).to.equal('ignore');
    const failed = {
      ...adjustment('refund_failed', 3000n, 're_1'),
      refundId: 'refund-1',
      failureReason: 'the provider could not refund (declined)',
    };
    expect(decideReversal(deposit, [pending], failed)).to.deep.include({
      action: 'fail',
      reason: 'the provider could not refund (declined)',
    });
    expect(decideReversal(deposit, [booked], failed).action).to.equal('ignore');
    // The total that counted it, arriving after the failure, books nothing.
    const gone = { ...pending, status: 'failed' as const };
    expect(decideReversal(deposit, [gone], adjustment('refund', 3000n)).action).to.equal('ignore');
    // Another refund id, or a refund the provider reported (never pending), is not this one.
    const other = { ...confirmed, refundId: 'refund-2' };
    expect(decideReversal(deposit, [pending], other).action).to.equal('ignore');
  });
});
