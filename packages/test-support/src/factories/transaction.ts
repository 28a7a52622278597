// Type imports only: the factory runs nothing of the ledger.
import type { Account, Transaction } from '../../../../services/ledger/src/domain/transaction.js';
import { minor } from './minor-units.js';

export const ACCOUNT_ID = '11111111-1111-4111-8111-111111111111';
export const COUNTERPARTY_ACCOUNT_ID = '22222222-2222-4222-8222-222222222222';
export const TRANSACTION_ID = '33333333-3333-4333-8333-333333333333';

/**
 * A ledger transaction as its rules see it: a pending deposit of 10.00 USD without a fee into ACCOUNT_ID, made now;
 * a test names only what is special about its own.
 */
export function aTransaction(over: Partial<Transaction> = {}): Transaction {
  const now = new Date();
  return {
    id: TRANSACTION_ID,
    accountId: ACCOUNT_ID,
    userId: 'user-a',
    type: 'deposit',
    status: 'pending',
    amount: minor(1000),
    currency: 'USD',
    fee: minor(0),
    ...NO_COUNTERPARTY,
    ...NO_CONVERSION,
    ...NO_PROVIDER_ANSWER,
    ...NOT_A_REVERSAL,
    metadata: {},
    reference: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    ...over,
  };
}

// What a plain deposit has none of.
const NO_COUNTERPARTY = { counterpartyAccountId: null, counterpartyUserId: null };
const NO_CONVERSION = { exchangeRate: null, convertedAmount: null, convertedCurrency: null };
const NO_PROVIDER_ANSWER = { paymentId: null, failureReason: null };
const NOT_A_REVERSAL = { originalTransactionId: null, reversalReason: null, heldAmount: null };

/** A completed deposit, as a reversal, a late payment or a platform loss finds it. */
export const aCompletedDeposit = (over: Partial<Transaction> = {}): Transaction =>
  aTransaction({ status: 'completed', completedAt: new Date(), ...over });

/** A ledger account in USD with nothing in it. */
export function anAccount(over: Partial<Account> = {}): Account {
  const now = new Date();
  return {
    id: ACCOUNT_ID,
    userId: 'user-a',
    currency: 'USD',
    balance: minor(0),
    availableBalance: minor(0),
    metadata: {},
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}
