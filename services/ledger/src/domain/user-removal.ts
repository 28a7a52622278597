import { AppError } from '@payments/service-kit';

/** What the ledger holds for a user, read under the locks that keep it from changing. */
export interface UserHoldings {
  accounts: { balance: bigint; availableBalance: bigint }[];
  /** The user's own pending transactions, withdrawals awaiting reconciliation among them. */
  pending: number;
  awaitingReconciliation: number;
  /** Other users' pending transfers into this user's accounts. */
  incoming: number;
}

/** Why a user cannot be removed yet; empty when nothing stands in the way. */
export function removalObstacles(holdings: UserHoldings): string[] {
  const { accounts, pending, awaitingReconciliation, incoming } = holdings;
  const obstacles: string[] = [];
  if (accounts.some((account) => account.balance !== 0n || account.availableBalance !== 0n)) {
    obstacles.push('a non-zero balance');
  }
  if (pending > 0) {
    const flagged =
      awaitingReconciliation > 0
        ? `, ${awaitingReconciliation} awaiting reconciliation with the provider`
        : '';
    obstacles.push(`${pending} pending transaction(s)${flagged}`);
  }
  if (incoming > 0) obstacles.push(`${incoming} incoming transfer(s) still pending`);
  return obstacles;
}

export function removalRefused(obstacles: string[]): AppError {
  return new AppError(
    'BUSINESS_RULE_VIOLATION',
    `The user cannot be deleted while holding ${obstacles.join(' and ')}; ` +
      'withdraw or transfer the money and let pending transactions finish first',
  );
}
