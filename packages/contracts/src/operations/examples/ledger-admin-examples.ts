import type { LEDGER_ADMIN_OPERATIONS } from '../ledger-admin-operations.js';
import type { OperationExamples } from '../operation.js';
import {
  ACTION,
  ADA,
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
  getOverview: {
    response: {
      window: 'hour',
      bucket_seconds: 60,
      from: '2026-03-02T09:01:00.000Z',
      to: '2026-03-02T10:00:12.000Z',
      // Two of the 60 buckets.
      series: [
        {
          start: '2026-03-02T09:59:00.000Z',
          deposits: { created: 12, completed: 10, failed: 1 },
          withdrawals: { created: 3, completed: 2, failed: 0 },
          transfers: { created: 4, completed: 4, failed: 0 },
          failure_rate: 0.0588,
          card_attempts: 11,
          card_declines: 1,
          decline_rate: 0.0909,
        },
        {
          start: '2026-03-02T10:00:00.000Z',
          deposits: { created: 2, completed: 0, failed: 0 },
          withdrawals: { created: 0, completed: 0, failed: 0 },
          transfers: { created: 0, completed: 0, failed: 0 },
          failure_rate: null,
          card_attempts: 0,
          card_declines: 0,
          decline_rate: null,
        },
      ],
      totals: {
        deposits: { created: 14, completed: 10, failed: 1 },
        withdrawals: { created: 3, completed: 2, failed: 0 },
        transfers: { created: 4, completed: 4, failed: 0 },
        failure_rate: 0.0588,
        card_attempts: 11,
        card_declines: 1,
        decline_rate: 0.0909,
      },
      reconciliation: {
        unconfirmed_withdrawals: 1,
        open_cases: 2,
        open_cases_by_kind: {
          captured_not_credited: 1,
          credited_not_captured: 0,
          dispute_still_held: 0,
          amount_differs: 0,
          paid_out_still_held: 0,
          failed_still_held: 0,
          paid_out_not_debited: 0,
          returned_not_credited: 0,
          transfer_not_reversed: 0,
          unknown_to_ledger: 1,
          duplicate_capture: 0,
          duplicate_transfer: 0,
          payout_amount_differs: 0,
          foreign_object: 0,
          request_expired: 0,
        },
      },
      provider_requests: { waiting: 3, oldest_seconds: 1.8 },
      dead_letters: [
        { queue: 'ledger', count: 0 },
        { queue: 'currency', count: 0 },
        { queue: 'webhook-delivery', count: 2 },
      ],
      queues: [
        { queue: 'ledger', depth: 5 },
        { queue: 'currency', depth: 0 },
        { queue: 'webhook-delivery', depth: null },
      ],
      outbox: [
        { service: 'ledger', oldest_unpublished_seconds: 0 },
        { service: 'identity', oldest_unpublished_seconds: null },
      ],
      webhook_deliveries_pending: 7,
      missing: [
        { part: 'outbox.identity', detail: 'fetch failed' },
        { part: 'queues.webhook-delivery', detail: 'no answer within 2000 ms' },
      ],
      generated_at: '2026-03-02T10:00:12.000Z',
    },
  },
  getChargebackExposure: {
    response: {
      window_days: 120,
      since: '2025-11-02T10:00:00.000Z',
      by_currency: [{ currency: 'USD', exposure: 95, exposed_users: 1, deposits_in_window: 420 }],
      data: [{ user_id: GRACE, currency: 'USD', exposure: 95, deposits_in_window: 100, balance: 5 }],
      has_more: false,
    },
  },
} satisfies { [K in keyof typeof LEDGER_ADMIN_OPERATIONS]?: OperationExamples };
