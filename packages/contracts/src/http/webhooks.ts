import { Type } from '@sinclair/typebox';

const PaymentStatus = Type.Union(
  [Type.Literal('completed'), Type.Literal('failed'), Type.Literal('pending')],
  {
    description: '`pending` is recorded and changes nothing',
  },
);
const PaymentId = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The transaction id given when the deposit or withdrawal was accepted',
});

/** /webhook/payment: `{ payment_id, status }`, the payment id being the transaction id given at creation. */
export const PaymentWebhookBody = Type.Object({ payment_id: PaymentId, status: PaymentStatus });

/** /webhook/payment-status: the same, plus what the provider says about the money (amount in minor units). */
export const PaymentStatusWebhookBody = Type.Object({
  payment_id: PaymentId,
  status: PaymentStatus,
  amount: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'In minor units' }),
  ),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
  metadata: Type.Optional(
    Type.Object({
      transaction_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      failure_reason: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
  ),
});

const ProviderId = Type.String({ minLength: 1, maxLength: 200 });

/** What every provider event must look like, whatever its type. */
export const ProviderEventEnvelope = Type.Object({
  id: ProviderId,
  type: Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      'payment_intent.succeeded, payment_intent.payment_failed, payout.paid, payout.failed, charge.refunded, ' +
      'refund.created, refund.updated, refund.failed, charge.refund.updated, charge.dispute.created, ' +
      'charge.dispute.closed or account.updated; other types are acknowledged and change nothing',
  }),
  data: Type.Object({ object: Type.Object({}) }),
  livemode: Type.Optional(Type.Boolean({ description: 'Whether the event happened in live mode' })),
  account: Type.Optional(
    Type.Union([Type.Null(), ProviderId], {
      description: 'Stripe Connect: the connected account the object lives on; absent for the platform',
    }),
  ),
});

/** The payment intent or payout an event of a handled type carries; other fields are ignored. */
export const ProviderObject = Type.Object({
  id: ProviderId,
  amount: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'In minor units' }),
  currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Lower-case ISO 4217 code' }),
  status: Type.String({ maxLength: 200 }),
  metadata: Type.Optional(Type.Object({ transaction_id: Type.Optional(ProviderId) })),
  last_payment_error: Type.Optional(
    Type.Union([Type.Null(), Type.Object({ message: Type.Optional(Type.String()) })]),
  ),
  failure_message: Type.Optional(Type.Union([Type.Null(), Type.String()])),
  cancellation_reason: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 200 })])),
});

const ProviderAmount = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'In minor units',
});
const ProviderCurrency = Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Lower-case ISO 4217 code' });
const ProviderMetadata = Type.Optional(Type.Object({ transaction_id: Type.Optional(ProviderId) }));
const ProviderReference = Type.Optional(Type.Union([Type.Null(), ProviderId]));

/**
 * The charge a `charge.refunded` event carries. `amount_refunded` is the total refunded so far (each partial
 * refund sends the charge again with a larger total): the ledger reverses what the total adds, so a repeat or an
 * older total changes nothing. The deposit is `metadata.transaction_id`, else `payment_intent`, else `id`.
 */
export const ProviderChargeObject = Type.Object({
  id: ProviderId,
  amount: ProviderAmount,
  amount_refunded: ProviderAmount,
  currency: ProviderCurrency,
  payment_intent: ProviderReference,
  metadata: ProviderMetadata,
  refunds: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        data: Type.Array(Type.Object({ id: ProviderId }), {
          description: 'Newest first; only a reference: the refunded total is what counts',
        }),
      }),
    ]),
  ),
});

/**
 * The dispute a `charge.dispute.created` or `.closed` event carries; each dispute id takes effect once. Closed with
 * `status` lost: reversed; won or warning_closed: the hold is released. The deposit is `metadata.transaction_id`,
 * else `payment_intent`, else `charge`.
 */
export const ProviderDisputeObject = Type.Object({
  id: ProviderId,
  amount: ProviderAmount,
  currency: ProviderCurrency,
  status: Type.String({ maxLength: 200 }),
  charge: ProviderReference,
  payment_intent: ProviderReference,
  metadata: ProviderMetadata,
});

/**
 * The refund a `refund.created`, `refund.updated`, `refund.failed` or `charge.refund.updated` event carries. Only a
 * refund the ledger asked for (its `metadata.refund_id`) takes effect: `succeeded` books it, `failed` or `canceled`
 * releases its hold; refunds made elsewhere count through `charge.refunded`'s total.
 */
export const ProviderRefundObject = Type.Object({
  id: ProviderId,
  amount: ProviderAmount,
  currency: ProviderCurrency,
  status: Type.Union([Type.Null(), Type.String({ maxLength: 200 })]),
  charge: ProviderReference,
  payment_intent: ProviderReference,
  failure_reason: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 200 })])),
  metadata: Type.Optional(
    Type.Object({
      transaction_id: Type.Optional(ProviderId),
      refund_id: Type.Optional(Type.String({ format: 'uuid' })),
    }),
  ),
});

/**
 * The connected account an `account.updated` event carries (Stripe Connect): whether it pays out, and what the
 * provider still needs. The ledger takes it for the payout account linked with that id, and only when the event is
 * newer (`created`) than what it holds.
 */
export const ProviderAccountObject = Type.Object({
  id: ProviderId,
  object: Type.Literal('account'),
  payouts_enabled: Type.Boolean(),
  requirements: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        currently_due: Type.Optional(
          Type.Union([
            Type.Null(),
            Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 }),
          ]),
        ),
        disabled_reason: Type.Optional(
          Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength: 200 })]),
        ),
      }),
    ]),
  ),
});

/** An `account.updated` event: its `created` (Unix seconds) orders the updates of one account. */
export const ProviderAccountEvent = Type.Object({
  id: ProviderId,
  type: Type.Literal('account.updated'),
  created: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  livemode: Type.Optional(Type.Boolean()),
  account: Type.Optional(Type.Union([Type.Null(), ProviderId])),
  data: Type.Object({ object: ProviderAccountObject }),
});

/** A provider event of a handled type, as the document shows it: the envelope with its object. */
export const ProviderEventBody = Type.Object({
  id: ProviderId,
  type: ProviderEventEnvelope.properties.type,
  created: Type.Optional(
    Type.Integer({ minimum: 0, description: 'When the provider made the event (Unix seconds)' }),
  ),
  data: Type.Object({
    object: Type.Union(
      [
        ProviderObject,
        ProviderChargeObject,
        ProviderRefundObject,
        ProviderDisputeObject,
        ProviderAccountObject,
      ],
      {
        description:
          'A payment intent or payout, a charge (refunds), a refund, a dispute or a connected account',
      },
    ),
  }),
});
