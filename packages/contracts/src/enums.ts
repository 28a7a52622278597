// The API's enumerations as plain lists: the schemas are built on them, and they load without TypeBox or ajv.

export const USER_STATUSES = ['active', 'disabled', 'locked'] as const;
export const USER_ROLES = ['user', 'admin'] as const;

/** `reversal`: a provider's refund or chargeback of a completed deposit, a new transaction linked to it. */
export const TRANSACTION_TYPES = ['deposit', 'withdrawal', 'transfer', 'reversal'] as const;
/**
 * Why a reversal exists: the provider refunded the deposit, or its payer disputed it (held while open); or the
 * provider gave money back against what the books said: a paid payout returned, a payment captured after its
 * deposit had ended.
 */
export const REVERSAL_REASONS = ['refund', 'dispute', 'payout_returned', 'late_payment'] as const;
/** Why a refund is asked for, as Stripe names it. */
export const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];
export const TRANSACTION_STATUSES = ['pending', 'completed', 'failed', 'canceled'] as const;

/**
 * How the payment provider's own records and the books can disagree about a transaction, compared net: what the
 * provider kept for a payment (captured less refunds and lost disputes) against what the ledger credited for it;
 * what stayed paid out for a payout (its transfer less reversals) against what the ledger debited. The provider's
 * whole picture of a transaction counts: a second capture or transfer for it, a payout for another amount than its
 * transfer, an object naming it that the ledger never asked for, a request too old to be made again.
 */
export const MISMATCH_KINDS = [
  'captured_not_credited',
  'credited_not_captured',
  'dispute_still_held',
  'amount_differs',
  'paid_out_still_held',
  'failed_still_held',
  'paid_out_not_debited',
  'returned_not_credited',
  'transfer_not_reversed',
  'unknown_to_ledger',
  'duplicate_capture',
  'duplicate_transfer',
  'payout_amount_differs',
  'foreign_object',
  'request_expired',
] as const;

/**
 * book: apply what the provider's records say to the books; refund: give an extra capture back to the payer at the
 * provider; reverse: take an extra transfer back from the connected account; nothing_owed: record that nothing is.
 */
export const RECONCILIATION_DECISIONS = ['book', 'refund', 'reverse', 'nothing_owed'] as const;
export type ReconciliationDecision = (typeof RECONCILIATION_DECISIONS)[number];
export const RECONCILIATION_CASE_STATUSES = ['open', 'cleared', 'resolved'] as const;

export const PLATFORM_LOSS_REASONS = ['refund', 'dispute'] as const;

/** The events a client may subscribe an endpoint to (outgoing webhooks). */
export const WEBHOOK_EVENT_TYPES = [
  'transaction.completed',
  'transaction.failed',
  'transaction.canceled',
  'transaction.reversed',
  'transaction.updated',
  'account.created',
  'user.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * API keys (docs/adr/0121): what a restricted key may do, and how a key is told from a token by its look.
 *
 * - `read`: every read (GET) of the caller's own resources;
 * - `money`: opening and changing accounts and moving money (deposits, withdrawals, transfers and what follows
 *   from a transaction, such as a refund);
 * - `webhook_endpoints`: creating, changing and deleting outgoing webhook endpoints;
 * - `admin_read` / `admin_write` (an admin's keys only): the admin routes, reading or acting, and an admin's view
 *   of other users' resources.
 *
 * A key without scopes (`sk_…`) acts with all its user's powers; a restricted key (`rk_…`) with only its scopes,
 * and never manages API keys or its user.
 */
export const API_KEY_SCOPES = ['read', 'money', 'webhook_endpoints', 'admin_read', 'admin_write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
