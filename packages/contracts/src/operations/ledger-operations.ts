import { JSON_BODY, PROTECTED, type Operation } from './operation.js';

/** The ledger: accounts, payout accounts, money operations and transactions. */
export const LEDGER_OPERATIONS = {
  openAccount: {
    method: 'post',
    path: '/account',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'Open an account in a supported currency',
    body: 'OpenAccount',
    success: { status: 201, description: 'The account', schema: 'Account', headers: ['Location'] },
    errors: [...JSON_BODY, ...PROTECTED, 422],
  },
  listAccounts: {
    method: 'get',
    path: '/accounts',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'Your accounts',
    query: 'PageQuery',
    success: { status: 200, description: 'A page of accounts', schema: 'AccountPage' },
    errors: [400, ...PROTECTED],
  },
  getAccount: {
    method: 'get',
    path: '/account/{id}',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'An account',
    success: { status: 200, description: 'The account', schema: 'Account' },
    errors: [...PROTECTED, 404],
  },
  getBalance: {
    method: 'get',
    path: '/account/{id}/balance',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'The balance of an account, now or at a past moment',
    description:
      'Without `at`: the booked and the available balance now. With `at`: the booked balance at that moment, the ' +
      'sum of the entries booked before it (an entry at exactly `at` is not yet in it), so it equals the ' +
      '`opening_balance` of a statement from `at`. No `available_balance` then: holds are not journaled, so a ' +
      'past available balance is not known. A moment in the future is answered as of now.',
    query: 'BalanceQuery',
    success: { status: 200, description: 'The balance', schema: 'BalanceAnswer' },
    errors: [400, ...PROTECTED, 404],
  },
  getStatement: {
    method: 'get',
    path: '/account/{id}/statement',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'A statement: opening balance, each entry with the running balance, closing balance',
    description:
      'The period is `[from, to)`: an entry at exactly `from` is in it, one at exactly `to` in the next period. ' +
      'Both are RFC 3339 date-times with an offset (`Z` or `±hh:mm`); `to` defaults to now and is never later ' +
      'than now, `from` defaults to 30 days before `to`. Entries are the account’s journal, oldest first: credits ' +
      'positive, debits negative with their fee included, of any transaction type; a running balance may be ' +
      'negative. Every page is read from one consistent snapshot, so `opening_balance` plus the amounts is ' +
      '`closing_balance` even while money moves. Pages hold up to `limit` entries; while `has_more`, ask again with ' +
      '`starting_after` set to the last entry’s `id`. With `format=csv` the answer is `text/csv` (RFC 4180, a ' +
      'header row, amounts as decimal strings with the currency’s decimals), with an `opening_balance` row on the ' +
      'first page, a `closing_balance` row on the last, and a `Link: <…>; rel="next"` header while more follow. ' +
      'An entry booked in the last few seconds may still appear in a period that has just ended: its time is ' +
      'when its transaction began.',
    query: 'StatementQuery',
    success: {
      status: 200,
      description: 'One page of the statement',
      schema: 'Statement',
      alsoAs: 'text/csv',
      headers: ['CacheControl', 'Link', 'ContentDisposition'],
    },
    errors: [400, ...PROTECTED, 404],
  },
  listAccountTransactions: {
    method: 'get',
    path: '/account/{id}/transactions',
    owner: 'ledger',
    access: 'user',
    tag: 'Transactions',
    summary: 'The transaction history of an account',
    query: 'HistoryQuery',
    success: { status: 200, description: 'A page of transactions, newest first', schema: 'TransactionPage' },
    errors: [400, ...PROTECTED, 404],
  },
  linkPayoutAccount: {
    method: 'post',
    path: '/payout-account',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'Make and link the account at the payment provider your withdrawals are paid out to',
    description:
      'The ledger makes a connected account for you at the provider (Stripe Connect) and links it: 201 the first ' +
      'time, 200 after (the same account). `onboarding_url` is where you complete the provider’s onboarding; post ' +
      'again for a fresh link. 422 where no provider is configured, 503 while it cannot be reached.',
    success: { status: 201, description: 'The linked payout account', schema: 'PayoutAccount' },
    alsoAnswers: [503],
    errors: [...PROTECTED, 422],
  },
  getPayoutAccount: {
    method: 'get',
    path: '/payout-account',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'The account at the payment provider your withdrawals are paid out to',
    description:
      '`payouts_enabled` says whether the provider pays out to the account now, and `requirements` what it still ' +
      'needs (Stripe: `requirements.currently_due`, `requirements.disabled_reason`), as its `account.updated` ' +
      'events last reported them.',
    success: { status: 200, description: 'The linked payout account', schema: 'PayoutAccount' },
    errors: [...PROTECTED, 404],
  },
  replacePayoutAccount: {
    method: 'put',
    path: '/payout-account',
    owner: 'ledger',
    access: 'user',
    tag: 'Accounts',
    summary: 'Replace your payout account by a new one made at the payment provider',
    description:
      'The ledger makes a new connected account for you at the provider and links it in place of the one named ' +
      'by `replaces`, with a fresh `onboarding_url`. Withdrawals from then on are paid out to the new account. ' +
      '409 CONFLICT while a withdrawal of yours is pending (it is paid out to the account it was asked for), or ' +
      'when `replaces` was never your linked account; a request repeated once the account was replaced answers ' +
      'the new one and replaces nothing. 404 while none is linked, 422 where no provider is configured or it ' +
      'refuses, 503 while it cannot be reached.',
    body: 'ReplacePayoutAccount',
    success: { status: 200, description: 'The newly linked payout account', schema: 'PayoutAccount' },
    alsoAnswers: [503],
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
  deposit: moneyOperation('deposit'),
  withdraw: moneyOperation('withdraw'),
  transfer: moneyOperation('transfer'),
  listTransactions: {
    method: 'get',
    path: '/transactions',
    owner: 'ledger',
    access: 'user',
    tag: 'Transactions',
    summary: 'Your transactions',
    description:
      'Newest first. `reference` and `metadata[key]=value` (any number of keys, all must match) find your own ' +
      'transactions by what you attached to them; a transfer received from another user never matches them.',
    query: 'HistoryQuery',
    success: { status: 200, description: 'A page of transactions, newest first', schema: 'TransactionPage' },
    errors: [400, ...PROTECTED],
  },
  getTransaction: {
    method: 'get',
    path: '/transaction/{id}',
    owner: 'ledger',
    access: 'user',
    tag: 'Transactions',
    summary: 'A transaction and its status',
    description:
      'A `reversal` (a provider’s refund or chargeback of a completed deposit) names the deposit in ' +
      '`original_transaction_id`; the deposit stays completed and both show in the history.',
    success: { status: 200, description: 'The transaction', schema: 'Transaction' },
    errors: [...PROTECTED, 404],
  },
  refundTransaction: {
    method: 'post',
    path: '/transaction/{id}/refund',
    owner: 'ledger',
    access: 'user',
    tag: 'Money operations',
    summary: 'Refund a completed card deposit, in whole or in part, through the payment provider',
    description:
      'By the deposit’s owner, or an admin (recorded in the admin trail; the owner’s balance pays either way). ' +
      'Only a completed deposit paid through the provider can be refunded; refunds of it add up to at most what ' +
      'it captured, less what disputes hold or took (422 BUSINESS_RULE_VIOLATION beyond, INVALID_AMOUNT for a bad ' +
      '`amount`). Without `amount`, all that is left is refunded. Accepted (202) as a pending `reversal` with ' +
      '`reversal_reason` `refund`, whose net amount (less its share of the deposit fee, given back) is held from ' +
      'the available balance (422 INSUFFICIENT_FUNDS when it is not there; nothing is held then). It is completed ' +
      'when the provider confirms the refund, once however the answer and the provider’s events arrive, and ' +
      'fails, releasing the hold, when the provider refuses it. The same `Idempotency-Key` with the same body ' +
      'replays the first answer (the refund as it stands now); with another body it is a 409. Another user’s ' +
      'deposit is a 404.',
    headers: ['IdempotencyKey'],
    body: 'RefundRequest',
    bodyOptional: true,
    success: {
      status: 202,
      description: 'The refund: a reversal of the deposit, pending until the provider confirms it',
      schema: 'Transaction',
      headers: ['Location', 'IdempotentReplayed'],
    },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
} satisfies Record<string, Operation>;

/** Deposits, withdrawals and transfers: one shape, accepted at once and settled later. */
function moneyOperation(kind: 'deposit' | 'withdraw' | 'transfer'): Operation {
  return {
    method: 'post',
    path: `/account/{id}/${kind}`,
    owner: 'ledger',
    access: 'user',
    tag: 'Money operations',
    summary: {
      deposit: 'Deposit: pending until the payment provider confirms it',
      withdraw: 'Withdraw: funds held now, debited when the provider pays out',
      transfer: 'Transfer to another account, converted when the currencies differ (v1.1)',
    }[kind],
    description:
      'Accepted at once (202) as a pending transaction; follow `Location` for its status. The same ' +
      '`Idempotency-Key` with the same body replays the first answer; with another body it is a 409. The ' +
      '`currency` must be the account’s (422 INVALID_CURRENCY); an amount with too many decimals, zero or ' +
      'negative is a 422, and so is a withdrawal or transfer the available balance does not cover ' +
      '(INSUFFICIENT_FUNDS). Where a payment provider pays withdrawals out, a withdrawal that passes those checks ' +
      'by a user without a payout account links one first, as POST /payout-account does; in production it is a ' +
      '422 BUSINESS_RULE_VIOLATION instead, and nothing is held. A withdrawal to a payout account the provider ' +
      'does not pay out to yet is 422 PAYOUTS_NOT_ENABLED, naming what it still needs, and holds nothing. `metadata` and `reference` are yours, returned on ' +
      'the transaction and in the lists that show it to you, never to the other side of a transfer; a `reference` ' +
      'you gave before answers the first request again when the body is the same (`Idempotent-Replayed`), else ' +
      '409 DUPLICATE_ENTRY.' +
      (kind === 'deposit'
        ? ' A deposit that names a `payment_method` is paid with it at once: the provider confirms the payment ' +
          'as it creates it (Stripe: `confirm=true`). A declined card leaves the deposit pending with the reason ' +
          'in `failure_reason`, for the payer to pay with another method; it completes when the provider reports ' +
          'the payment. 422 BUSINESS_RULE_VIOLATION where no payment provider is configured.'
        : ''),
    headers: ['IdempotencyKey'],
    body: ({ deposit: 'DepositRequest', withdraw: 'MoneyRequest', transfer: 'TransferRequest' } as const)[
      kind
    ],
    success: {
      status: 202,
      description: 'The pending transaction',
      schema: 'Transaction',
      headers: ['Location', 'IdempotentReplayed'],
    },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  };
}
