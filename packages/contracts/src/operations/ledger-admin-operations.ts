import { JSON_BODY, PROTECTED, type Operation } from './operation.js';

/** The ledger's views and decisions for admins: reconciliation, the trail of admin actions, overdrawn accounts. */
export const LEDGER_ADMIN_OPERATIONS = {
  listReconciliation: {
    method: 'get',
    path: '/admin/reconciliation',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'What waits for reconciliation with the payment provider (admins only)',
    description:
      'One list, told apart by `kind`. First the withdrawals handed to the provider that got no confirmation ' +
      'within the hold expiry (`unconfirmed_withdrawal`): they stay pending with their hold (never released by a ' +
      'timer); the provider’s late payout.paid or payout.failed settles them once, and they leave this list. Then ' +
      'the open mismatches reconciliation found between the provider’s own records and the books, compared net ' +
      '(`captured_not_credited`, `credited_not_captured`, `dispute_still_held`, `amount_differs`, `paid_out_still_held`, ' +
      '`failed_still_held`, `paid_out_not_debited`, `returned_not_credited`, `transfer_not_reversed`, ' +
      '`unknown_to_ledger`); a case leaves the list when an admin decides it or when the two agree again. Pages by ' +
      'offset or by cursor: `starting_after` and `ending_before` take the `id` of an item of either kind, also one ' +
      'that has left the list since it was read. With ' +
      '`format=csv` the answer is the whole list as a `text/csv` report (RFC 4180, amounts as decimal strings).',
    query: 'ReconciliationQuery',
    success: {
      status: 200,
      description: 'A page of what waits',
      schema: 'ReconciliationPage',
      alsoAs: 'text/csv',
      headers: ['ContentDisposition'],
    },
    errors: [400, ...PROTECTED],
  },
  runReconciliation: {
    method: 'post',
    path: '/admin/reconciliation/runs',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Reconcile the books with the payment provider’s records now (admins only)',
    description:
      'Pages through what the provider made since the last run’s cursor (payments, refunds, disputes, transfers ' +
      'and payouts), compares each with the books, opens a case for each mismatch and clears the cases that agree ' +
      'again. The ledger also runs it every `RECONCILIATION_INTERVAL_SECONDS`. 409 while a run is under way; 422 ' +
      'where no provider is configured.',
    success: { status: 200, description: 'What the run read and found', schema: 'ReconciliationRun' },
    errors: [...PROTECTED, 409, 422],
  },
  getReconciliationCase: {
    method: 'get',
    path: '/admin/reconciliation/cases/{id}',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'One reconciliation case, open or decided (admins only)',
    success: { status: 200, description: 'The case', schema: 'ReconciliationCase' },
    errors: [...PROTECTED, 404],
  },
  resolveReconciliationCase: {
    method: 'post',
    path: '/admin/reconciliation/cases/{id}/resolution',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Decide a reconciliation case, with a reason (admins only)',
    description:
      '`book` applies what the provider’s records say now to the transaction, through the same flows as the ' +
      'provider’s events and under the same locks: a capture credited (or, for a deposit that ended, credited as ' +
      'a late payment), a refund or lost dispute reversed, a payout debited, or its failure released and its ' +
      'transfer taken back. Each books once, whatever arrives later. 409 when the provider’s records do not ' +
      'explain the difference; 422 for money the books never took in (`duplicate_capture`, ' +
      '`duplicate_transfer`, `foreign_object`, `unknown_to_ledger`), which is given back instead: `refund` ' +
      'refunds such a payment to its payer in full at the provider, `reverse` takes such a transfer back from the ' +
      'connected account (never the object the ledger asked for: 422), each once under a key of the case. ' +
      '`nothing_owed` records that nothing is. The same decision again answers the decided case; another is a ' +
      '409. Every decision lands in the trail of admin actions (GET /admin/actions).',
    body: 'ReconciliationDecision',
    success: { status: 200, description: 'The decided case', schema: 'ReconciliationCase' },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
  listAdminActions: {
    method: 'get',
    path: '/admin/actions',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'The append-only trail of admin actions: who, when, what, whose and why (admins only)',
    description:
      'Every action an admin takes on another user’s resource, in any service (a user’s status or deletion, a ' +
      'webhook endpoint disabled, enabled or deleted, a delivery sent again), on the platform’s own (a ' +
      'dead-letter replay), and every reconciliation decision. `owner` is the user the resource belongs to; ' +
      '`actor` and `owner` narrow the list to one admin’s actions or to one user’s resources. Reading is not ' +
      'an action and is not listed.',
    query: 'AdminActionQuery',
    success: { status: 200, description: 'A page of actions, oldest first', schema: 'AdminActionPage' },
    errors: [400, ...PROTECTED],
  },
  findTransactions: {
    method: 'get',
    path: '/admin/transactions',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary:
      'Find any user’s transactions by type, status, account, user, date, amount, reference or id (admins only)',
    description:
      'Newest first, paged by offset or by cursor as the other lists. Every filter given must hold: `type`, ' +
      '`status`, `account_id`, `user_id` (the account’s owner), `currency`, `from` and `to` (days, whole UTC days, ' +
      'or moments; both inclusive), `amount_min` and `amount_max` (decimal strings in major units of `currency`, ' +
      'which they need; no more decimals than it has), `reference`, `metadata[key]=value`, and `q`: the start ' +
      'of the transaction’s id or of the provider’s reference for it (a PaymentIntent `pi_…`). Each item is the ' +
      'transaction with its owner (`user_id`) and where it stands with the provider, never the payer’s client ' +
      'secret. `pagination.total` counts at most 10 000 matches. Reading is not an action and is not in the trail.',
    query: 'AdminTransactionQuery',
    success: {
      status: 200,
      description: 'A page of transactions, newest first',
      schema: 'AdminTransactionPage',
    },
    errors: [400, ...PROTECTED],
  },
  getTransactionTimeline: {
    method: 'get',
    path: '/admin/transactions/{id}/timeline',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Everything that happened to a transaction, oldest first (admins only)',
    description:
      'One answer gathered by the ledger (ADR 0126): the transaction as `findTransactions` shows it, and its ' +
      '`entries`: created; each request to the payment provider and its answer; the provider’s events received ' +
      'about it (webhook-ingest); the journal’s postings; status changes; reversals linked to it with their own ' +
      'status; the events about it for its owner’s webhooks, each delivery attempt to each endpoint and its ' +
      'outcome (webhook-delivery). A service that does not answer leaves its part out and is `unavailable` in ' +
      '`sources`; the rest is answered all the same.',
    success: { status: 200, description: 'The transaction and its timeline', schema: 'TransactionTimeline' },
    errors: [...PROTECTED, 404],
  },
  listOverdrawnAccounts: {
    method: 'get',
    path: '/admin/overdrawn-accounts',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Accounts a refund or lost dispute took below zero, and the platform losses (admins only)',
    description:
      'A reversal takes back what the provider took back, even when the user has already moved the money on: ' +
      'the only way an account goes below zero. Nothing can be withdrawn or transferred from such an account; ' +
      'it leaves this list once deposits make it up. Furthest below zero first. Also counted by the ledger’s ' +
      '`ledger_accounts_overdrawn_by_reversal` gauge and listed by its audit. Every page also reports, per ' +
      'currency, what live users owe and what the platform lost (`by_currency`), and the latest platform losses: ' +
      'refunds and lost disputes of deleted users’ deposits, booked against the loss account ' +
      '(`platform_losses`; gauge `ledger_platform_losses`).',
    query: 'PageQuery',
    success: { status: 200, description: 'A page of accounts', schema: 'OverdrawnAccountPage' },
    errors: [400, ...PROTECTED],
  },
  findAccounts: {
    method: 'get',
    path: '/admin/accounts',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: "A user's accounts, for an operator (admins only)",
    description:
      'The accounts of the user named by `user_id`, oldest first, with their balances: what the user sees at ' +
      '`GET /accounts`. Reading is not an action and is not listed in the trail.',
    query: 'AdminAccountQuery',
    success: { status: 200, description: 'A page of accounts', schema: 'AccountPage' },
    errors: [400, ...PROTECTED],
  },
  getOverview: {
    method: 'get',
    path: '/admin/overview',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Activity over the last hour or day, and the platform’s current gauges (admins only)',
    description:
      'For charts: per bucket (`window=hour`: 60 of 1 minute; `day`: 96 of 15 minutes, on a grid from the Unix ' +
      'epoch, the last one partial), the deposits, withdrawals and transfers created, and how many of those have ' +
      'completed or failed since; the failure rate (failed among those that ended); card payment attempts, ' +
      'declines and the decline rate (attempts the provider declined, among those it declined or took). Then the ' +
      'current figures: open reconciliation cases by kind, dead letters and ready messages per consumer queue, ' +
      'the age of the oldest unpublished outbox event of the ledger and of identity, outgoing webhook deliveries ' +
      'pending, requests to the payment provider not yet done. The ledger gathers them (ADR 0127): the activity ' +
      'from its books, the queues from the broker, the other services’ figures from their `/metrics`; each part ' +
      'within `OVERVIEW_PART_TIMEOUT_MS`. A part that is down or late is null in the answer and named in `missing`; ' +
      'the rest is answered all the same.',
    query: 'OverviewQuery',
    success: { status: 200, description: 'The overview', schema: 'Overview' },
    errors: [400, ...PROTECTED],
  },
  getChargebackExposure: {
    method: 'get',
    path: '/admin/chargeback-exposure',
    owner: 'ledger',
    access: 'user',
    tag: 'Administration',
    summary: 'Card deposits still open to a chargeback whose money has already left (admins only)',
    description:
      'What the platform would lose if every card deposit still inside the dispute window (`DISPUTE_WINDOW_DAYS`, ' +
      '120 by default, as at card networks) were charged back. For each account, the card deposits (deposits paid ' +
      'through the payment provider) completed within the window, each less what refunds and disputes already ' +
      'took back of it, sum to D; its exposure is D − max(balance, 0), and never below 0 nor above D: money still ' +
      'in the account covers a chargeback, money withdrawn or transferred away does not. A deposit confirmed ' +
      'without the provider is no card deposit. Per currency in all (`by_currency`), and per user and currency ' +
      '(`data`, only those with an exposure, largest first, up to `limit`; `has_more` when more have one). Amounts ' +
      'are exact, in the currency’s units.',
    query: 'ChargebackExposureQuery',
    success: { status: 200, description: 'The exposure', schema: 'ChargebackExposure' },
    errors: [400, ...PROTECTED],
  },
} satisfies Record<string, Operation>;
