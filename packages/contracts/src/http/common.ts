import { Type, type TSchema } from '@sinclair/typebox';
import { API_VERSIONS } from '../versions.js';

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
/** How a currency is named in answers: the upper-case ISO 4217 code. */
export const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. USD' });

export const Nullable = <S extends TSchema>(schema: S) => Type.Union([schema, Type.Null()]);

/** Why an admin acts on another user's resource: optional, kept in the trail of admin actions (GET /admin/actions). */
export const AdminReason = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: "Why, when an admin acts on another user's resource; kept in the trail of admin actions",
});

/** The body an admin's action may carry where it takes nothing else: an optional reason. */
export const AdminReasonBody = Type.Object(
  { reason: Type.Optional(AdminReason) },
  { additionalProperties: false },
);

/** `limit` and `offset` of the listing endpoints (/accounts, /transactions, histories). */
export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size' }),
  offset: Type.Integer({
    minimum: 0,
    maximum: 2_147_483_647,
    default: 0,
    description: 'Items to skip',
  }),
});

export const Pagination = Type.Object(
  {
    limit: Type.Integer({ minimum: 1 }),
    offset: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0, description: 'Items in the whole list' }),
  },
  { additionalProperties: false },
);

/** A page of a list: `{ data: [...], pagination: { limit, offset, total } }`. */
export const Page = <S extends TSchema>(item: S) =>
  Type.Object({ data: Type.Array(item), pagination: Pagination }, { additionalProperties: false });

/** GET /: which versions the API serves. */
export const DiscoveryView = Type.Object(
  {
    versions: Type.Array(Type.Union(API_VERSIONS.map((version) => Type.Literal(version)))),
    current_version: Type.String(),
    min_supported_version: Type.String(),
  },
  { additionalProperties: false },
);
