import type { MinorUnits } from '@payments/contracts';
import { holdOf, type Transaction } from './transaction.js';

/**
 * The ledger's own accounts, one per code and currency, on the other side of every user movement; platform_loss
 * takes the place of a removed user's account when the provider takes back money of their deposit.
 */
export type SystemCode = 'provider_clearing' | 'fee_revenue' | 'fx' | 'platform_loss';

export type LegTarget = { kind: 'account'; accountId: string } | { kind: 'system'; code: SystemCode };

/** One side of a double entry: credit positive, debit negative. */
export interface Leg {
  target: LegTarget;
  currency: string;
  amount: bigint;
}

/** What settling a transaction does: the entries to write and the hold it gives back. */
export interface Settlement {
  legs: Leg[];
  release: { accountId: string; amount: MinorUnits } | null;
  /** Only a reversal may take a user account below zero: the provider already took the money back. */
  mayOverdraw?: boolean;
}

export interface AccountChange {
  accountId: string;
  balance: bigint;
  available: bigint;
}

export interface Destination {
  accountId: string;
  currency: string;
}

const userAccount = (accountId: string): LegTarget => ({ kind: 'account', accountId });
const systemAccount = (code: SystemCode): LegTarget => ({ kind: 'system', code });

/** The entries that complete a pending transaction; a transfer needs its destination account. */
export function completionOf(transaction: Transaction, destination?: Destination): Settlement {
  const { accountId, amount, fee, currency } = transaction;
  const hold = holdOf(transaction);
  const feeLeg: Leg = { target: systemAccount('fee_revenue'), currency, amount: fee };
  switch (transaction.type) {
    case 'deposit':
      return settlement(
        [
          { target: userAccount(accountId), currency, amount: amount - fee },
          { target: systemAccount('provider_clearing'), currency, amount: -amount },
          feeLeg,
        ],
        null,
      );
    case 'withdrawal':
      return settlement(
        [
          { target: userAccount(accountId), currency, amount: -hold },
          { target: systemAccount('provider_clearing'), currency, amount },
          feeLeg,
        ],
        { accountId, amount: hold },
      );
    case 'transfer': {
      if (!destination) throw new Error('a transfer settles only with its destination account');
      const source: Leg[] = [{ target: userAccount(accountId), currency, amount: -hold }, feeLeg];
      if (destination.currency === currency) {
        return settlement([...source, { target: userAccount(destination.accountId), currency, amount }], {
          accountId,
          amount: hold,
        });
      }
      if (transaction.convertedAmount === null || transaction.convertedCurrency !== destination.currency) {
        throw new Error('a cross-currency transfer lacks its conversion into the destination currency');
      }
      const converted = transaction.convertedAmount;
      return settlement(
        [
          ...source,
          { target: systemAccount('fx'), currency, amount },
          { target: systemAccount('fx'), currency: destination.currency, amount: -converted },
          { target: userAccount(destination.accountId), currency: destination.currency, amount: converted },
        ],
        { accountId, amount: hold },
      );
    }
    case 'reversal': {
      if (transaction.reversalReason === 'payout_returned') {
        // The payout's amount came back from the provider; the withdrawal's fee stays earned.
        return settlement(
          [
            { target: userAccount(accountId), currency, amount },
            { target: systemAccount('provider_clearing'), currency, amount: -amount },
          ],
          null,
        );
      }
      if (transaction.reversalReason === 'late_payment') {
        // Booked as the deposit would have been: the provider captured `amount`, the user gets it less the fee.
        return settlement(
          [
            { target: userAccount(accountId), currency, amount: amount - fee },
            { target: systemAccount('provider_clearing'), currency, amount: -amount },
            feeLeg,
          ],
          null,
        );
      }
      // The deposit's mirror: the provider takes back `amount` from clearing, the user gives up amount − fee and
      // fee revenue gives back the part of the deposit fee this reverses.
      const reversed = settlement(
        [
          { target: userAccount(accountId), currency, amount: -(amount - fee) },
          { target: systemAccount('fee_revenue'), currency, amount: -fee },
          { target: systemAccount('provider_clearing'), currency, amount },
        ],
        hold > 0n ? { accountId, amount: hold } : null,
      );
      return { ...reversed, mayOverdraw: true };
    }
  }
}

/**
 * A refund or lost dispute of a removed user's deposit, booked as its reversal would have been with the platform
 * loss account in the user's place: provider clearing gets `amount` back, fee revenue gives back the deposit fee's
 * share, and the platform loses the rest.
 */
export function lossOf(loss: { amount: MinorUnits; fee: MinorUnits; currency: string }): Settlement {
  const { amount, fee, currency } = loss;
  return settlement(
    [
      { target: systemAccount('platform_loss'), currency, amount: -(amount - fee) },
      { target: systemAccount('fee_revenue'), currency, amount: -fee },
      { target: systemAccount('provider_clearing'), currency, amount },
    ],
    null,
  );
}

/** Nothing to book: for a transaction whose account is gone. */
export const NO_SETTLEMENT: Settlement = { legs: [], release: null };

/** A failed or canceled transaction writes no entries; it only gives back what it held. */
export function releaseOf(transaction: Transaction): Settlement {
  const hold = holdOf(transaction);
  return settlement([], hold > 0n ? { accountId: transaction.accountId, amount: hold } : null);
}

function settlement(legs: Leg[], release: Settlement['release']): Settlement {
  const nonZero = legs.filter((leg) => leg.amount !== 0n);
  assertBalanced(nonZero);
  return { legs: nonZero, release };
}

/** Per currency, the legs of one transaction sum to zero. */
export function assertBalanced(legs: Leg[]): void {
  const sums = new Map<string, bigint>();
  for (const leg of legs) sums.set(leg.currency, (sums.get(leg.currency) ?? 0n) + leg.amount);
  for (const [currency, sum] of sums) {
    if (sum !== 0n) throw new Error(`unbalanced legs in ${currency}: they sum to ${sum}`);
  }
}

/**
 * How each user account's balance and available balance move, in account id order (the lock order).
 * Entries move the balance; available follows the entries plus any released hold.
 */
export function accountChangesOf(settlement: Settlement): AccountChange[] {
  const changes = new Map<string, AccountChange>();
  const changeOf = (accountId: string) => {
    const change = changes.get(accountId) ?? { accountId, balance: 0n, available: 0n };
    changes.set(accountId, change);
    return change;
  };
  for (const leg of settlement.legs) {
    if (leg.target.kind !== 'account') continue;
    const change = changeOf(leg.target.accountId);
    change.balance += leg.amount;
    change.available += leg.amount;
  }
  if (settlement.release) changeOf(settlement.release.accountId).available += settlement.release.amount;
  return [...changes.values()].sort((a, b) =>
    a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0,
  );
}
