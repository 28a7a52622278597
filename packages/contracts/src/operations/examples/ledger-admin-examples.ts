import type { LEDGER_ADMIN_OPERATIONS } from '../ledger-admin-operations.js';
import type { OperationExamples } from '../operation.js';
import {
  ACTION,
  ADA,
  completedDeposit,
  ENDPOINT,
  EVENT,
  reversal,
  SETTLED_AT,
  USD_ACCOUNT,
  CASE,
  DEPOSIT,
  DEPOSITED_AT,
  GRACE,
  GRACE_ACCOUNT,
  LINUS,
  mismatch,
  NOW,
  OPENED_AT,
  page,
  pendingWithdrawal,
  PAYMENT_INTENT,
  PAYOUT,
  REVERSAL,
  WITHDRAWAL,
} from './samples.js';

/** A deposit as operators list it: its owner, where it stands with the provider, never the client secret. */
const adminDeposit = {
  ...completedDeposit,
  user_id: ADA,
  counterparty_user_id: null,
  provider_payment: {
    provider: 'stripe',
    kind: 'payment',
    reference: PAYMENT_INTENT,
    state: 'created',
    attempts: 1,
    last_error: null,
  },
};

/** Examples of the ledger's admin operations: reconciliation, the trail, overdrawn accounts. */
export const LEDGER_ADMIN_EXAMPLES = {
  listReconciliation: {
    response: {
      data: [
        {
          kind: 'unconfirmed_withdrawal',
          ...pendingWithdrawal,
          payment_id: PAYOUT,
          created_at: DEPOSITED_AT,
          updated_at: DEPOSITED_AT,
          user_id: ADA,
          reconciliation_required_at: NOW,
        },
        mismatch,
      ],
      has_more: false,
      pagination: page(2),
    },
    alternative:
      'kind,case_id,status,transaction_id,provider_reference,currency,provider_amount,ledger_amount,found_at\r\n' +
      `unconfirmed_withdrawal,,open,${WITHDRAWAL},${PAYOUT},USD,,250.00,${NOW}\r\n` +
      `captured_not_credited,${CASE},open,${DEPOSIT},${PAYMENT_INTENT},USD,2000.00,0.00,${NOW}\r\n`,
  },
  runReconciliation: {
    response: {
      since: '2026-03-15T10:00:00.000Z',
      cursor: NOW,
      checked: 412,
      agreed: 409,
      unsettled: 2,
      mismatches: 1,
      removed: 0,
      opened: 1,
      cleared: 0,
    },
  },
  getReconciliationCase: { response: mismatch },
  resolveReconciliationCase: {
    request: {
      decision: 'book',
      reason: 'Stripe shows the charge captured on 14 March; crediting the deposit',
    },
    response: {
      ...mismatch,
      status: 'resolved',
      decision: 'book',
      reason: 'Stripe shows the charge captured on 14 March; crediting the deposit',
      resolved_by: LINUS,
      resolved_at: NOW,
    },
  },
  listAdminActions: {
    response: {
      data: [
        {
          id: ACTION,
          actor: LINUS,
          action: 'user.status_changed',
          subject: `user:${ADA}`,
          owner: ADA,
          reason: 'Chargebacks on three deposits; see case 1182',
          detail: { from: 'active', to: 'locked' },
          created_at: NOW,
        },
      ],
      has_more: false,
      pagination: page(1),
    },
  },
  findTransactions: {
    response: {
      data: [adminDeposit],
      has_more: false,
      pagination: page(1),
    },
  },
  getTransactionTimeline: {
    response: {
      transaction: adminDeposit,
      entries: [
        {
          at: DEPOSITED_AT,
          kind: 'created',
          source: 'ledger',
          summary: 'deposit of 2000.00 USD created',
          status: 'pending',
          amount: 2000,
          currency: 'USD',
          account_id: USD_ACCOUNT,
        },
        {
          at: '2026-03-14T09:26:53.120Z',
          kind: 'provider_request',
          source: 'ledger',
          summary: 'Asked stripe to create the payment (call 1)',
          status: 'requested',
          attempt: 1,
        },
        {
          at: '2026-03-14T09:26:53.610Z',
          kind: 'provider_response',
          source: 'ledger',
          summary: `stripe created the payment ${PAYMENT_INTENT}`,
          status: 'created',
          reference: PAYMENT_INTENT,
        },
        {
          at: '2026-03-14T09:26:55.301Z',
          kind: 'provider_event',
          source: 'webhook-ingest',
          summary: 'Received payment_intent.succeeded on /webhook/provider: completed',
          status: 'completed',
          reference: PAYMENT_INTENT,
          event_id: 'evt_3PqR8sLkdIwHu7ix0k1L2m3N',
          event_type: 'payment_intent.succeeded',
        },
        {
          at: SETTLED_AT,
          kind: 'status_change',
          source: 'ledger',
          summary: 'Status: pending → completed',
          status: 'completed',
          reason: null,
        },
        {
          at: SETTLED_AT,
          kind: 'posting',
          source: 'ledger',
          summary: `Credited 2000.00 USD to the user account ${USD_ACCOUNT}`,
          amount: 2000,
          currency: 'USD',
          account_id: USD_ACCOUNT,
        },
        {
          at: '2026-03-14T09:26:55.530Z',
          kind: 'webhook_event',
          source: 'webhook-delivery',
          summary: "Event transaction.completed for the owner's webhooks (1 endpoint(s))",
          event_id: EVENT,
          event_type: 'transaction.completed',
        },
        {
          at: '2026-03-14T09:26:55.980Z',
          kind: 'webhook_delivery',
          source: 'webhook-delivery',
          summary:
            'transaction.completed delivered to https://example.com/hooks/payments: 200 in 84 ms (attempt 1)',
          status: 'succeeded',
          event_id: EVENT,
          event_type: 'transaction.completed',
          endpoint_id: ENDPOINT,
          url: 'https://example.com/hooks/payments',
          attempt: 1,
          status_code: 200,
          error: null,
        },
        {
          at: NOW,
          kind: 'reversal',
          source: 'ledger',
          summary: 'refund of 200.00 USD: completed',
          status: 'completed',
          reason: 'refund',
          amount: 200,
          currency: 'USD',
          transaction_id: reversal.id,
        },
      ],
      sources: { ledger: 'ok', 'webhook-ingest': 'ok', 'webhook-delivery': 'ok' },
      truncated: false,
    },
  },
  listOverdrawnAccounts: {
    response: {
      data: [
        {
          id: GRACE_ACCOUNT,
          user_id: GRACE,
          currency: 'USD',
          balance: -120,
          available_balance: -120,
          metadata: {},
          created_at: OPENED_AT,
          updated_at: NOW,
          overdrawn_by: 120,
        },
      ],
      has_more: false,
      pagination: page(1),
      by_currency: [
        { currency: 'USD', overdrawn_accounts: 1, overdrawn_total: 120, losses: 1, losses_total: 35 },
      ],
      platform_losses: [
        {
          id: REVERSAL,
          deposit_id: DEPOSIT,
          reason: 'dispute',
          currency: 'USD',
          amount: 35,
          fee: 0,
          loss: 35,
          provider_reference: 'dp_1PqR8sLkdIwHu7ixDsP1',
          booked_at: NOW,
        },
      ],
    },
  },
} satisfies { [K in keyof typeof LEDGER_ADMIN_OPERATIONS]?: OperationExamples };
