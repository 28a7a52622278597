import type { LEDGER_OPERATIONS } from '../ledger-operations.js';
import type { OperationExamples } from '../operation.js';
import {
  CONNECTED_ACCOUNT,
  DEPOSIT,
  DEPOSITED_AT,
  eurAccount,
  GRACE_ACCOUNT,
  completedDeposit,
  completedTransfer,
  OPENED_AT,
  page,
  pendingDeposit,
  pendingTransfer,
  pendingWithdrawal,
  reversal,
  SETTLED_AT,
  TRANSFER,
  TRANSFERRED_AT,
  USD_ACCOUNT,
  usdAccount,
} from './samples.js';

const payoutAccount = {
  provider: 'stripe',
  account: CONNECTED_ACCOUNT,
  onboarding_url: `https://connect.stripe.com/setup/e/${CONNECTED_ACCOUNT}/Xk2mP9qR`,
  payouts_enabled: true,
  requirements: { currently_due: [], disabled_reason: null },
  created_at: OPENED_AT,
};
const { onboarding_url: _onboarding, ...shownPayoutAccount } = payoutAccount;
const REPLACED_ACCOUNT = 'acct_1QxW7vLkdIwHu7ixRpL3mN8q';

/** Examples of the ledger's operations: accounts, money operations, transactions. */
export const LEDGER_EXAMPLES = {
  openAccount: {
    request: { currency: 'EUR', metadata: { purpose: 'european suppliers' } },
    response: { ...eurAccount, metadata: { purpose: 'european suppliers' } },
  },
  listAccounts: { response: { data: [usdAccount, eurAccount], has_more: false, pagination: page(2) } },
  getAccount: { response: usdAccount },
  getBalance: {
    response: { account_id: USD_ACCOUNT, balance: 1500, currency: 'USD', available_balance: 1250 },
  },
  getStatement: {
    response: {
      account_id: USD_ACCOUNT,
      currency: 'USD',
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-04-01T00:00:00.000Z',
      opening_balance: 0,
      closing_balance: 1497.5,
      entries: [
        {
          id: '1041',
          transaction_id: DEPOSIT,
          type: 'deposit',
          counterparty_account_id: null,
          amount: 2000,
          balance: 2000,
          created_at: DEPOSITED_AT,
          reference: 'order-8812',
          metadata: { order: '8812' },
        },
        {
          id: '1057',
          transaction_id: TRANSFER,
          type: 'transfer',
          counterparty_account_id: GRACE_ACCOUNT,
          amount: -502.5,
          balance: 1497.5,
          created_at: TRANSFERRED_AT,
          reference: 'inv-2026-0039',
          metadata: { invoice: 'INV-2026-0039' },
        },
      ],
      has_more: false,
    },
    alternative:
      'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency,reference,metadata\r\n' +
      '2026-03-01T00:00:00.000Z,,,opening_balance,,,0.00,USD,,\r\n' +
      `${DEPOSITED_AT},1041,${DEPOSIT},deposit,,2000.00,2000.00,USD,order-8812,"{""order"":""8812""}"\r\n` +
      `${TRANSFERRED_AT},1057,${TRANSFER},transfer,${GRACE_ACCOUNT},-502.50,1497.50,USD,inv-2026-0039,` +
      '"{""invoice"":""INV-2026-0039""}"\r\n' +
      '2026-04-01T00:00:00.000Z,,,closing_balance,,,1497.50,USD,,\r\n',
  },
  listAccountTransactions: {
    response: { data: [completedTransfer, completedDeposit], has_more: false, pagination: page(2) },
  },
  linkPayoutAccount: { response: payoutAccount },
  getPayoutAccount: {
    response: {
      ...shownPayoutAccount,
      payouts_enabled: false,
      requirements: { currently_due: ['individual.id_number'], disabled_reason: 'requirements.past_due' },
    },
  },
  replacePayoutAccount: {
    request: { replaces: CONNECTED_ACCOUNT },
    response: {
      ...payoutAccount,
      account: REPLACED_ACCOUNT,
      onboarding_url: `https://connect.stripe.com/setup/e/${REPLACED_ACCOUNT}/Qm4nT7vW`,
    },
  },
  deposit: {
    request: {
      amount: '20.00',
      currency: 'USD',
      metadata: { order: '8812' },
      reference: 'order-8812',
      payment_method: 'pm_card_visa',
    },
    response: { ...pendingDeposit, created_at: DEPOSITED_AT },
  },
  withdraw: {
    request: {
      amount: 250,
      currency: 'USD',
      metadata: { invoice: 'INV-2026-0042' },
      reference: 'payout-2026-03-16',
    },
    response: pendingWithdrawal,
  },
  transfer: {
    request: {
      amount: '500.00',
      currency: 'USD',
      to_account_id: GRACE_ACCOUNT,
      metadata: { invoice: 'INV-2026-0039' },
      reference: 'inv-2026-0039',
    },
    response: pendingTransfer,
  },
  listTransactions: {
    response: { data: [reversal, completedTransfer, completedDeposit], has_more: false, pagination: page(3) },
  },
  getTransaction: { response: { ...completedDeposit, updated_at: SETTLED_AT, completed_at: SETTLED_AT } },
  refundTransaction: {
    request: { amount: '200.00', reason: 'requested_by_customer' },
    // Pending while the provider makes the refund (its net amount held); completed when it confirms it.
    response: {
      ...reversal,
      status: 'pending',
      payment_id: null,
      completed_at: null,
      refund_reason: 'requested_by_customer',
    },
  },
} satisfies { [K in keyof typeof LEDGER_OPERATIONS]?: OperationExamples };
