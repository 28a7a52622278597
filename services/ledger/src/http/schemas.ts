import { Type } from '@sinclair/typebox';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../domain/transaction.js';

const Amount = Type.Union([Type.Number(), Type.String({ maxLength: 64 })]);
const Currency = Type.String({ minLength: 1, maxLength: 16 });
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

export const OpenAccountBody = Type.Object({ currency: Currency, metadata: Type.Optional(Type.Unknown()) });

export const MoneyBody = Type.Object({ amount: Amount, currency: Currency });

export const TransferBody = Type.Object({
  amount: Amount,
  currency: Currency,
  to_account_id: Type.String({ format: 'uuid' }),
});

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
});

export const HistoryQuery = Type.Object({
  ...PageQuery.properties,
  account_id: Type.Optional(Type.String({ format: 'uuid' })),
  type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((type) => Type.Literal(type)))),
  status: Type.Optional(Type.Union(TRANSACTION_STATUSES.map((status) => Type.Literal(status)))),
  from: Type.Optional(Day),
  to: Type.Optional(Day),
});
