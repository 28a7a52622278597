import { expect } from 'chai';
import { removalObstacles, removalRefused } from '../src/domain/user-removal.js';

const empty = { balance: 0n, availableBalance: 0n };

describe('user removal rules', () => {
  it('finds nothing in the way of a user with empty accounts and nothing pending', () => {
    expect(
      removalObstacles({ accounts: [empty, empty], pending: 0, awaitingReconciliation: 0, incoming: 0 }),
    ).to.deep.equal([]);
    expect(
      removalObstacles({ accounts: [], pending: 0, awaitingReconciliation: 0, incoming: 0 }),
    ).to.deep.equal([]);
  });

  it('names money, pending transactions (those awaiting reconciliation too) and incoming transfers', () => {
    const obstacles = removalObstacles({
      accounts: [empty, { balance: 500n, availableBalance: 0n }],
      pending: 2,
      awaitingReconciliation: 1,
      incoming: 3,
    });
    expect(obstacles).to.deep.equal([
      'a non-zero balance',
      '2 pending transaction(s), 1 awaiting reconciliation with the provider',
      '3 incoming transfer(s) still pending',
    ]);
    const refusal = removalRefused(obstacles);
    expect(refusal.code).to.equal('BUSINESS_RULE_VIOLATION');
    expect(refusal.detail).to.match(
      /^The user cannot be deleted while holding a non-zero balance and 2 pending/,
    );
  });

  it('counts money held aside as money: an available balance alone stands in the way', () => {
    expect(
      removalObstacles({
        accounts: [{ balance: 0n, availableBalance: 1n }],
        pending: 0,
        awaitingReconciliation: 0,
        incoming: 0,
      }),
    ).to.deep.equal(['a non-zero balance']);
  });
});
