import { Type } from '@sinclair/typebox';
import { CurrencyCode, Nullable, Page, PageQuery, Timestamp, Uuid } from './common.js';
import { REVERSAL_REASONS, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../enums.js';
import { RequestedCurrency } from './accounts.js';

const TransactionTypeField = Type.Union(TRANSACTION_TYPES.map((type) => Type.Literal(type)));
const TransactionStatusField = Type.Union(TRANSACTION_STATUSES.map((status) => Type.Literal(status)));
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A date, YYYY-MM-DD' });

/** Exact: a JSON number or a decimal string, with no more decimals than the currency allows (else 422). */
export const Amount = Type.Union([Type.Number(), Type.String({ maxLength: 64 })], {
  description: 'Greater than zero; a JSON number or a decimal string such as "10.50"',
});

/** POST /account/{id}/deposit and /withdraw. */
export const MoneyBody = Type.Object({ amount: Amount, currency: RequestedCurrency });

/** POST /account/{id}/transfer. */
export const TransferBody = Type.Object({
  amount: Amount,
  currency: RequestedCurrency,
  to_account_id: Type.String({ format: 'uuid', description: 'The destination account' }),
});

/** GET /transactions and /account/{id}/transactions. */
export const HistoryQuery = Type.Object({
  ...PageQuery.properties,
  account_id: Type.Optional(Type.String({ format: 'uuid' })),
  type: Type.Optional(TransactionTypeField),
  status: Type.Optional(TransactionStatusField),
  from: Type.Optional(Day),
  to: Type.Optional(Day),
});

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
            'Reversals only: `refund` (completed when booked), or `dispute`: pending while the dispute is open ' +
            '(the amount is held), completed when lost, canceled when won; `payout_returned` (the payout came ' +
            'back: its amount is credited) and `late_payment` (the provider captured the payment after the deposit ' +
            'ended: credited as the deposit would have been), completed when booked',
        },
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
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TransactionPage = Page(TransactionView);
