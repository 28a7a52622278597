import { Type } from '@sinclair/typebox';
import { CurrencyCode, Nullable, Page, PageQuery, Timestamp, Uuid } from './common.js';
import { REFUND_REASONS, REVERSAL_REASONS, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../enums.js';
import { RequestedCurrency } from './accounts.js';

const TransactionTypeField = Type.Union(TRANSACTION_TYPES.map((type) => Type.Literal(type)));
const TransactionStatusField = Type.Union(TRANSACTION_STATUSES.map((status) => Type.Literal(status)));
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A date, YYYY-MM-DD' });

/** Exact: a JSON number or a decimal string, with no more decimals than the currency allows (else 422). */
export const Amount = Type.Union([Type.Number(), Type.String({ maxLength: 64 })], {
  description: 'Greater than zero; a JSON number or a decimal string such as "10.50"',
});

/** A money request's metadata, as Stripe bounds it (ADR 0117). */
export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX_LENGTH = 40;
export const METADATA_VALUE_MAX_LENGTH = 500;
export const REFERENCE_MAX_LENGTH = 255;

/** Square brackets would make a key that `metadata[key]` cannot filter by. */
const METADATA_KEY_PATTERN = '^[^\\[\\]]*$';

export const TransactionMetadata = Type.Record(
  Type.String(),
  Type.String({ maxLength: METADATA_VALUE_MAX_LENGTH }),
  {
    maxProperties: METADATA_MAX_KEYS,
    propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH, pattern: METADATA_KEY_PATTERN },
    description:
      `Your own key-value pairs: up to ${METADATA_MAX_KEYS} keys of 1 to ${METADATA_KEY_MAX_LENGTH} characters ` +
      `without square brackets, each value a string of up to ${METADATA_VALUE_MAX_LENGTH}; shown to you alone`,
  },
);

export const Reference = Type.String({
  minLength: 1,
  maxLength: REFERENCE_MAX_LENGTH,
  description:
    'Your own name for the transaction, unique among your transactions: the same request with the same reference ' +
    'replays the first answer, another request with it is a 409 DUPLICATE_ENTRY; shown to you alone',
});

/** What the integrator attaches to any money request. */
const Attached = {
  metadata: Type.Optional(TransactionMetadata),
  reference: Type.Optional(Reference),
};

/** POST /account/{id}/withdraw (and a deposit's common part). */
export const MoneyBody = Type.Object({ amount: Amount, currency: RequestedCurrency, ...Attached });

/** A payment method as Stripe names them: a test one (`pm_card_visa`), or one a payer's app made (`pm_1Q…`). */
export const PAYMENT_METHOD_PATTERN = '^pm_[A-Za-z0-9_]{1,252}$';

export const PaymentMethod = Type.String({
  pattern: PAYMENT_METHOD_PATTERN,
  maxLength: 255,
  description:
    "Pay the deposit at once with this payment method (`pm_…`: one the payer's app made with Stripe.js, or a " +
    'test one such as `pm_card_visa` or `pm_card_chargeDeclined`): the provider confirms its payment as it creates it. A decline ' +
    "is the pending deposit's `failure_reason`; the deposit completes only when the provider reports the payment",
});

/** POST /account/{id}/deposit: a withdrawal's body, and how it is paid. */
export const DepositBody = Type.Object({
  amount: Amount,
  currency: RequestedCurrency,
  ...Attached,
  payment_method: Type.Optional(PaymentMethod),
});

/** POST /transaction/{id}/refund: a refund of a completed card deposit, in whole or in part (ADR 0119). */
export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Union([Type.Number(), Type.String({ maxLength: 64 })], {
        description:
          'Greater than zero, in the deposit currency (a JSON number or a decimal string); absent: all that is ' +
          'left to refund of the deposit',
      }),
    ),
    reason: Type.Optional(
      Type.Union(
        REFUND_REASONS.map((reason) => Type.Literal(reason)),
        { description: "Why the payer gets the money back, as Stripe's refunds name it" },
      ),
    ),
  },
  { additionalProperties: false },
);

/** POST /account/{id}/transfer. */
export const TransferBody = Type.Object({
  amount: Amount,
  currency: RequestedCurrency,
  to_account_id: Type.String({ format: 'uuid', description: 'The destination account' }),
  ...Attached,
});

/** A history filter on one metadata key: `metadata[order]=8812`, as the query string spells it. */
export const METADATA_FILTER_PATTERN = `^metadata\\[([^\\[\\]]{1,${METADATA_KEY_MAX_LENGTH}})\\]$`;

/** GET /transactions and /account/{id}/transactions; `metadata[key]=value` filters too (METADATA_FILTER_PATTERN). */
export const HistoryQuery = Type.Object(
  {
    ...PageQuery.properties,
    account_id: Type.Optional(Type.String({ format: 'uuid' })),
    type: Type.Optional(TransactionTypeField),
    status: Type.Optional(TransactionStatusField),
    from: Type.Optional(Day),
    to: Type.Optional(Day),
    reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: REFERENCE_MAX_LENGTH,
        description: 'Only your transaction with this reference',
      }),
    ),
  },
  {
    patternProperties: {
      [METADATA_FILTER_PATTERN]: Type.String({
        maxLength: METADATA_VALUE_MAX_LENGTH,
        description:
          'Only your transactions whose metadata holds each of these pairs: `metadata[order]=8812`; a transfer ' +
          'received from another user never matches',
      }),
    },
  },
);

export const TransactionView = Type.Object(
  {
    id: Uuid,
    account_id: Uuid,
    type: TransactionTypeField,
    status: TransactionStatusField,
    amount: Type.Number(),
    currency: CurrencyCode,
    counterparty_account_id: Nullable(Uuid),
    payment_id: Nullable(Type.String({ description: 'The id the payment provider confirms with' })),
    failure_reason: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: Nullable(Timestamp),
    metadata: Type.Optional(TransactionMetadata),
    reference: Type.Optional(Nullable(Reference)),
    fee: Type.Optional(Type.Number({ description: 'From v1.1: the fee, in the transaction currency' })),
    exchange_rate: Type.Optional(
      Type.Number({
        description: 'From v1.1, cross-currency transfers: units of the destination currency per unit',
      }),
    ),
    converted_amount: Type.Optional(
      Type.Number({ description: 'From v1.1, cross-currency transfers: the amount credited' }),
    ),
    original_transaction_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'Reversals only: the transaction this reverses, which stays as it ended (both show in the history): the ' +
          'completed deposit refunded or disputed, the completed withdrawal whose payout came back, or the ended ' +
          'deposit whose payment the provider captured late',
      }),
    ),
    reversal_reason: Type.Optional(
      Type.Union(
        REVERSAL_REASONS.map((reason) => Type.Literal(reason)),
        {
          description:
            'Reversals only: `refund` (completed when booked; one asked for with POST /transaction/{id}/refund is ' +
            'pending, its net amount held, until the provider confirms it, and failed if the provider refuses it), ' +
            'or `dispute`: pending while the dispute is open ' +
            '(the amount is held), completed when lost, canceled when won; `payout_returned` (the payout came ' +
            'back: its amount is credited) and `late_payment` (the provider captured the payment after the deposit ' +
            'ended: credited as the deposit would have been), completed when booked',
        },
      ),
    ),
    refund_reason: Type.Optional(
      Nullable(
        Type.Union(
          REFUND_REASONS.map((reason) => Type.Literal(reason)),
          {
            description:
              'Refunds only (`reversal_reason` `refund`): the `reason` the refund was asked for with (POST ' +
              "/transaction/{id}/refund), as Stripe's refunds name it; null when none was given or the provider " +
              'reported the refund itself',
          },
        ),
      ),
    ),
    provider_payment: Type.Optional(
      Type.Object(
        {
          provider: Type.String({ description: 'The payment provider asked (`stripe`)' }),
          reference: Type.String({
            description: "The provider's id for the payment (Stripe: the PaymentIntent)",
          }),
          client_secret: Type.Optional(
            Type.String({
              description:
                "What the payer's client confirms the payment with (Stripe: the PaymentIntent's `client_secret`, " +
                'for Stripe.js or `stripe.paymentIntents.confirm`); shown to the owner alone',
            }),
          ),
          payment_url: Type.Optional(
            Type.String({
              format: 'uri',
              description:
                'The page the owner pays on in a browser (`{public address}/pay/{transaction_id}`, served by the ' +
                'gateway), with `client_secret` and only while the deposit is pending; absent where the ' +
                'deployment names no public address',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TransactionPage = Page(TransactionView);
