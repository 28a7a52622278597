import type { Operation } from './operation.js';

/** Webhook-ingest: the payment provider's calls. */
export const PROVIDER_WEBHOOK_OPERATIONS = {
  confirmPayment: {
    method: 'post',
    path: '/webhook/payment',
    owner: 'webhook-ingest',
    access: 'provider',
    tag: 'Webhooks',
    summary: 'Payment confirmation (unsigned; can be disabled)',
    body: 'PaymentWebhook',
    success: { status: 200, description: 'Recorded and published; an empty body' },
    errors: [400, 404, 413],
  },
  reportPaymentStatus: {
    method: 'post',
    path: '/webhook/payment-status',
    owner: 'webhook-ingest',
    access: 'provider',
    tag: 'Webhooks',
    summary: 'Signed payment status report',
    headers: ['WebhookSignature'],
    body: 'PaymentStatusWebhook',
    success: { status: 200, description: 'Recorded and published; an empty body' },
    errors: [400, 413],
  },
  receiveProviderEvent: {
    method: 'post',
    path: '/webhook/provider',
    owner: 'webhook-ingest',
    access: 'provider',
    tag: 'Webhooks',
    summary: 'Signed provider event (Stripe-style)',
    description:
      'Payments and payouts confirm or fail transactions. `charge.refunded` (the charge with its cumulative ' +
      '`amount_refunded`) and `charge.dispute.created` / `charge.dispute.closed` reverse a completed deposit: a ' +
      '`reversal` transaction linked to it. Each refunded total and each dispute takes effect once, whatever the ' +
      'redeliveries and their order. `refund.created`, `refund.updated`, `refund.failed` and ' +
      '`charge.refund.updated` book or fail a refund asked for through the API (its `metadata.refund_id`) once it ' +
      'succeeded or failed.',
    headers: ['ProviderSignature'],
    body: 'ProviderEvent',
    success: { status: 200, description: 'Recorded (and published when it moves money); an empty body' },
    errors: [400, 413],
  },
} satisfies Record<string, Operation>;
