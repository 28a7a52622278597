import type { LEDGER_ADMIN_OPERATIONS } from '../ledger-admin-operations.js';
import type { OperationExamples } from '../operation.js';
import {
  ACTION,
  ADA,
  CASE,
  eurAccount,
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
  usdAccount,
  WITHDRAWAL,
} from './samples.js';

/** Examples of the ledger's admin operations: reconciliation, the trail, overdrawn accounts, a user's accounts. */
export const LEDGER_ADMIN_EXAMPLES = {
  findAccounts: { response: { data: [usdAccount, eurAccount], has_more: false, pagination: page(2) } },
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
} satisfies { [K in keyof typeof LEDGER_ADMIN_OPERATIONS]?: OperationExamples };
