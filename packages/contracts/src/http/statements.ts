import { Type } from '@sinclair/typebox';
import { CurrencyCode, Nullable, Timestamp, Uuid } from './common.js';
import { Reference, TransactionMetadata } from './money.js';

const Moment = (description: string) =>
  Type.String({
    format: 'date-time',
    maxLength: 40,
    description: `${description} (RFC 3339, with an offset)`,
  });

/** GET /account/{id}/statement. */
export const StatementQuery = Type.Object({
  from: Type.Optional(Moment('Start of the period, inclusive; default 30 days before `to`')),
  to: Type.Optional(Moment('End of the period, exclusive; default now, and never later than now')),
  limit: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: 'Entries per page',
  }),
  starting_after: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,17}$',
      description: 'The `id` of the last entry of the previous page',
    }),
  ),
  format: Type.Union([Type.Literal('json'), Type.Literal('csv')], {
    default: 'json',
    description: '`csv` answers text/csv (a header row, amounts as decimal strings)',
  }),
});

/** GET /account/{id}/balance. */
export const BalanceQuery = Type.Object({
  at: Type.Optional(Moment('The balance at this past moment, from the entries booked before it')),
});

export const StatementEntryView = Type.Object(
  {
    id: Type.String({ description: 'The entry id; pass it as `starting_after` for the next page' }),
    transaction_id: Uuid,
    type: Nullable(Type.String({ description: 'The transaction type, e.g. deposit, transfer' })),
    counterparty_account_id: Nullable(Uuid),
    amount: Type.Number({ description: 'Signed: credits positive, debits negative (fees included)' }),
    balance: Type.Number({ description: 'The running balance after this entry' }),
    created_at: Timestamp,
    reference: Type.Optional(Nullable(Reference)),
    metadata: Type.Optional(TransactionMetadata),
  },
  { additionalProperties: false },
);

export const StatementView = Type.Object(
  {
    account_id: Uuid,
    currency: CurrencyCode,
    from: Timestamp,
    to: Timestamp,
    opening_balance: Type.Number({ description: 'The balance at `from`' }),
    closing_balance: Type.Number({ description: 'The balance at `to`' }),
    entries: Type.Array(StatementEntryView, { description: 'Oldest first' }),
    has_more: Type.Boolean({ description: 'More entries of the period follow this page' }),
  },
  { additionalProperties: false },
);

export const PastBalanceView = Type.Object(
  {
    account_id: Uuid,
    balance: Type.Number(),
    currency: CurrencyCode,
    at: Timestamp,
  },
  { additionalProperties: false },
);

/** The columns of a CSV statement, in order. */
export const STATEMENT_CSV_COLUMNS = [
  'created_at',
  'entry_id',
  'transaction_id',
  'type',
  'counterparty_account_id',
  'amount',
  'balance',
  'currency',
  'reference',
  'metadata',
] as const;
