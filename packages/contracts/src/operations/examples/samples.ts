/**
 * The values the examples share, so that one example's ids and moments are the next one's: Ada (a user) owns a USD
 * and a EUR account, deposits into the first and sends part of it to Grace's account; Linus is an admin.
 */
export const ADA = '5b0f8a4e-3c1d-4e7a-9f2b-8d6c1a2e4b70';
export const GRACE = '1c7e5d3b-9a2f-4e6d-8b1c-3f5a7e9d2c48';
export const LINUS = '9e2d4c6a-1b3f-4a5e-8c7d-0f1e2a3b4c5d';

export const USD_ACCOUNT = '3f6c2a1e-8b4d-4c9f-a2e7-5d1b0c9e8f47';
export const EUR_ACCOUNT = '7a1e9c3b-2d5f-4b8a-9c6e-1f0d3b2a5c84';
export const GRACE_ACCOUNT = 'e4b8d2a6-7c1f-4e3a-9b5d-2a8c6e4f1b93';

export const DEPOSIT = 'c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f';
export const WITHDRAWAL = '8f1a3c5e-7b9d-4f2a-b4c6-d8e0f2a4c6e8';
export const TRANSFER = '4d6f8a0c-2e4b-4a6d-8f0a-b2c4d6e8f0a2';
export const REVERSAL = 'a6c8e0b2-4d6f-4b8a-9c0e-f2a4b6c8d0e2';

export const ENDPOINT = '2b4d6f8a-0c2e-4a4b-8d6f-1a3c5e7b9d0f';
export const DELIVERY = '6e8a0c2d-4f6b-4d8e-a0c2-e4f6a8b0d2c4';
export const EVENT = 'b1d3f5a7-c9e1-4b3d-95f7-a9c1e3b5d7f9';
export const CASE = 'd5f7b9c1-e3a5-4c7e-b9d1-f3a5c7e9b1d3';
export const ACTION = 'f0a2c4e6-b8d0-4f2a-84c6-e8a0b2d4f6a8';

/** A payment at the provider: Stripe's PaymentIntent, charge and refund ids. */
export const PAYMENT_INTENT = 'pi_3PqR8sLkdIwHu7ix0a1B2c3D';
export const CHARGE = 'ch_3PqR8sLkdIwHu7ix0d4E5f6G';
export const REFUND = 're_3PqR8sLkdIwHu7ix0h7I8j9K';
export const CONNECTED_ACCOUNT = 'acct_1PqR8sLkdIwHu7ix';
export const PAYOUT = 'po_1PqR8sLkdIwHu7ixW2x3Y4z5';

export const OPENED_AT = '2026-03-02T08:15:30.000Z';
export const DEPOSITED_AT = '2026-03-14T09:26:53.000Z';
export const SETTLED_AT = '2026-03-14T09:26:55.412Z';
export const TRANSFERRED_AT = '2026-03-15T16:40:12.000Z';
export const NOW = '2026-03-16T10:00:00.000Z';

export const page = (total: number, limit = 20, offset = 0) => ({ limit, offset, total });

export const ada = {
  id: ADA,
  username: 'ada',
  email: 'ada@example.com',
  role: 'user',
  status: 'active',
  created_at: OPENED_AT,
  updated_at: OPENED_AT,
} as const;

export const usdAccount = {
  id: USD_ACCOUNT,
  user_id: ADA,
  currency: 'USD',
  balance: 1500,
  available_balance: 1250,
  metadata: { purpose: 'operating' },
  created_at: OPENED_AT,
  updated_at: TRANSFERRED_AT,
};

export const eurAccount = {
  id: EUR_ACCOUNT,
  user_id: ADA,
  currency: 'EUR',
  balance: 0,
  available_balance: 0,
  metadata: {},
  created_at: OPENED_AT,
  updated_at: OPENED_AT,
};

/** A deposit the provider has paid: completed, with its PaymentIntent. */
export const completedDeposit = {
  id: DEPOSIT,
  account_id: USD_ACCOUNT,
  type: 'deposit',
  status: 'completed',
  amount: 2000,
  currency: 'USD',
  counterparty_account_id: null,
  payment_id: PAYMENT_INTENT,
  failure_reason: null,
  created_at: DEPOSITED_AT,
  updated_at: SETTLED_AT,
  completed_at: SETTLED_AT,
  metadata: { order: '8812' },
  reference: 'order-8812',
  fee: 0,
  provider_payment: { provider: 'stripe', reference: PAYMENT_INTENT },
};

/** A deposit just accepted (202): pending until the provider confirms it. */
export const pendingDeposit = {
  ...completedDeposit,
  status: 'pending',
  updated_at: DEPOSITED_AT,
  completed_at: null,
  provider_payment: {
    provider: 'stripe',
    reference: PAYMENT_INTENT,
    client_secret: `${PAYMENT_INTENT}_secret_Yx7Qw2Er5Ty8`,
    payment_url: `https://payments.example.com/pay/${DEPOSIT}`,
  },
};

export const pendingWithdrawal = {
  id: WITHDRAWAL,
  account_id: USD_ACCOUNT,
  type: 'withdrawal',
  status: 'pending',
  amount: 250,
  currency: 'USD',
  counterparty_account_id: null,
  payment_id: null,
  failure_reason: null,
  created_at: NOW,
  updated_at: NOW,
  completed_at: null,
  metadata: { invoice: 'INV-2026-0042' },
  reference: 'payout-2026-03-16',
  fee: 0,
};

/** A cross-currency transfer (v1.1): the fee and the conversion shown. */
export const completedTransfer = {
  id: TRANSFER,
  account_id: USD_ACCOUNT,
  type: 'transfer',
  status: 'completed',
  amount: 500,
  currency: 'USD',
  counterparty_account_id: GRACE_ACCOUNT,
  payment_id: null,
  failure_reason: null,
  created_at: TRANSFERRED_AT,
  updated_at: TRANSFERRED_AT,
  completed_at: TRANSFERRED_AT,
  metadata: { invoice: 'INV-2026-0039' },
  reference: 'inv-2026-0039',
  fee: 2.5,
  exchange_rate: 0.9174,
  converted_amount: 458.7,
};

export const pendingTransfer = {
  ...completedTransfer,
  status: 'pending',
  completed_at: null,
};

/** A provider's refund of part of the deposit, booked as a reversal. */
export const reversal = {
  id: REVERSAL,
  account_id: USD_ACCOUNT,
  type: 'reversal',
  status: 'completed',
  amount: 200,
  currency: 'USD',
  counterparty_account_id: null,
  payment_id: REFUND,
  failure_reason: null,
  created_at: NOW,
  updated_at: NOW,
  completed_at: NOW,
  original_transaction_id: DEPOSIT,
  reversal_reason: 'refund',
  // Reported by the provider, not asked for through the API: no reason of ours.
  refund_reason: null,
  metadata: {},
  reference: null,
  fee: 0,
};

export const usd = {
  code: 'USD',
  name: 'US Dollar',
  numeric_code: '840',
  minor_units: 2,
  symbol: '$',
  regions: ['Americas'],
  countries: [
    { code: 'US', name: 'United States of America' },
    { code: 'EC', name: 'Ecuador' },
  ],
  supported: true,
};

export const eur = {
  code: 'EUR',
  name: 'Euro',
  numeric_code: '978',
  minor_units: 2,
  symbol: '€',
  regions: ['Europe'],
  countries: [
    { code: 'DE', name: 'Germany' },
    { code: 'FR', name: 'France' },
  ],
  supported: true,
};

export const jpy = {
  code: 'JPY',
  name: 'Yen',
  numeric_code: '392',
  minor_units: 0,
  symbol: '¥',
  regions: ['Asia'],
  countries: [{ code: 'JP', name: 'Japan' }],
  supported: true,
};

export const endpoint = {
  id: ENDPOINT,
  user_id: ADA,
  url: 'https://shop.example.com/hooks/payments',
  events: ['transaction.completed', 'transaction.failed', 'transaction.reversed'],
  description: 'Order fulfilment',
  enabled: true,
  api_version: '1.1',
  previous_secret_expires_at: null,
  created_at: OPENED_AT,
  updated_at: OPENED_AT,
};

export const delivery = {
  id: DELIVERY,
  endpoint_id: ENDPOINT,
  event_id: EVENT,
  event_type: 'transaction.completed',
  status: 'succeeded',
  attempts: 2,
  last_status_code: 200,
  last_latency_ms: 184,
  last_error: null,
  next_attempt_at: null,
  created_at: SETTLED_AT,
  updated_at: '2026-03-14T09:27:27.102Z',
  delivered_at: '2026-03-14T09:27:27.102Z',
};

export const mismatch = {
  kind: 'captured_not_credited',
  id: CASE,
  status: 'open',
  provider_reference: PAYMENT_INTENT,
  transaction_id: DEPOSIT,
  currency: 'USD',
  provider_amount: 2000,
  ledger_amount: 0,
  found_at: NOW,
  last_seen_at: NOW,
};
