import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import { aCompletedDeposit, anAdjustment as adjustment } from '@payments/test-support';
import {
  decidePlatformLoss,
  lossAsReversal,
  type PlatformLoss,
  type RemovedDeposit,
} from '../src/domain/platform-loss.js';
import { assertBalanced, lossOf } from '../src/domain/settlement.js';
import type { Transaction } from '../src/domain/transaction.js';

const DEPOSIT = '33333333-3333-4333-8333-333333333333';
const at = new Date('2026-01-01T00:00:00Z');

const deposit = aCompletedDeposit({
  id: DEPOSIT,
  userId: null,
  amount: toMinorUnits(10_000n),
  fee: toMinorUnits(100n),
  createdAt: at,
  updatedAt: at,
  completedAt: null,
});

const loss = (over: Partial<PlatformLoss>): PlatformLoss => ({
  id: '44444444-4444-4444-8444-444444444444',
  depositId: DEPOSIT,
  reason: 'refund',
  key: 'refund:3000',
  currency: 'USD',
  amount: toMinorUnits(3000n),
  fee: toMinorUnits(30n),
  reference: 're_1',
  correlationId: 'test',
  createdAt: at,
  ...over,
});

const removed = (reversals: Transaction[] = [], over: Partial<Transaction> = {}): RemovedDeposit => ({
  deposit: { ...deposit, ...over },
  reversals,
  providerReference: 'pi_1',
  removedAt: at,
});

describe("platform loss rules (a removed user's deposit taken back)", () => {
  it('books a refund by what its total adds, with the fee share a reversal would give back', () => {
    expect(decidePlatformLoss(removed(), adjustment('refund', 3000n))).to.deep.equal({
      action: 'book',
      loss: { key: 'refund:3000', reason: 'refund', amount: 3000n, fee: 30n },
    });
    const earlier = lossAsReversal(loss({}), deposit);
    expect(decidePlatformLoss(removed([earlier]), adjustment('refund', 3000n))).to.include({
      action: 'ignore',
    });
    expect(decidePlatformLoss(removed([earlier]), adjustment('refund', 5000n))).to.deep.equal({
      action: 'book',
      loss: { key: 'refund:5000', reason: 'refund', amount: 2000n, fee: 20n },
    });
  });

  it('books a dispute only once lost: an opened dispute holds nothing and a won one took nothing', () => {
    expect(decidePlatformLoss(removed(), adjustment('dispute_opened', 4000n))).to.include({
      action: 'ignore',
    });
    expect(decidePlatformLoss(removed(), adjustment('dispute_won', 4000n))).to.include({ action: 'ignore' });
    expect(decidePlatformLoss(removed(), adjustment('dispute_lost', 4000n))).to.deep.equal({
      action: 'book',
      loss: { key: 'dispute:dp_1', reason: 'dispute', amount: 4000n, fee: 40n },
    });
    const booked = lossAsReversal(
      loss({ reason: 'dispute', key: 'dispute:dp_1', reference: 'dp_1' }),
      deposit,
    );
    expect(decidePlatformLoss(removed([booked]), adjustment('dispute_lost', 4000n))).to.include({
      action: 'ignore',
    });
  });

  it('counts the reversals the deposit had before the removal, and never takes back more than it credited', () => {
    const lostBefore = {
      ...deposit,
      id: '55555555-5555-4555-8555-555555555555',
      type: 'reversal' as const,
      amount: toMinorUnits(7000n),
      fee: toMinorUnits(70n),
      paymentId: 'dp_early',
      originalTransactionId: DEPOSIT,
      reversalReason: 'dispute' as const,
    };
    expect(
      decidePlatformLoss(removed([lostBefore]), adjustment('dispute_lost', 7000n, 'dp_early')),
    ).to.include({
      action: 'ignore',
    });
    expect(decidePlatformLoss(removed([lostBefore]), adjustment('refund', 10_000n))).to.deep.equal({
      action: 'book',
      loss: { key: 'refund:3000', reason: 'refund', amount: 3000n, fee: 30n },
    });
  });

  it('takes back nothing from a deposit that credited nothing, or in another currency', () => {
    expect(decidePlatformLoss(removed([], { status: 'failed' }), adjustment('refund', 1000n))).to.include({
      action: 'ignore',
    });
    expect(decidePlatformLoss(removed(), { ...adjustment('refund', 1000n), currency: 'eur' })).to.include({
      action: 'ignore',
    });
  });

  it('books the loss as the reversal would be, with the platform loss account in the user’s place', () => {
    const { legs } = lossOf({ amount: toMinorUnits(3000n), fee: toMinorUnits(30n), currency: 'USD' });
    expect(legs.map((leg) => [leg.target, leg.amount])).to.deep.equal([
      [{ kind: 'system', code: 'platform_loss' }, -2970n],
      [{ kind: 'system', code: 'fee_revenue' }, -30n],
      [{ kind: 'system', code: 'provider_clearing' }, 3000n],
    ]);
    expect(() => assertBalanced(legs)).not.to.throw();
  });
});
