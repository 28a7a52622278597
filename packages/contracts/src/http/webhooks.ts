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
      'payment_intent.succeeded, payment_intent.payment_failed, payout.paid or payout.failed; other types are acknowledged and change nothing',
  }),
  data: Type.Object({ object: Type.Object({}) }),
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
});

/** A provider event of a handled type, as the document shows it: the envelope with its object. */
export const ProviderEventBody = Type.Object({
  id: ProviderId,
  type: ProviderEventEnvelope.properties.type,
  data: Type.Object({ object: ProviderObject }),
});
