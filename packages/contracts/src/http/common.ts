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

/**
 * Cursor paging, as Stripe pages: an object's `id` from the list, and the page of those just after it
 * (`starting_after`, the next page) or just before it (`ending_before`, the previous page), in the list's order.
 */
export const CursorQuery = Type.Object({
  starting_after: Type.Optional(
    Type.String({
      format: 'uuid',
      description: 'The `id` of the last item of the page you have: the next page. Not with `ending_before`',
    }),
  ),
  ending_before: Type.Optional(
    Type.String({
      format: 'uuid',
      description: 'The `id` of the first item of the page you have: the previous page',
    }),
  ),
});

/**
 * `limit` and `offset` of the listing endpoints (/accounts, /transactions, histories), and the cursors that page
 * them without skipping or repeating an item while the list grows.
 */
export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size' }),
  offset: Type.Integer({
    minimum: 0,
    maximum: 2_147_483_647,
    default: 0,
    description: 'Items to skip; not with a cursor',
  }),
  ...CursorQuery.properties,
});

export const Pagination = Type.Object(
  {
    limit: Type.Integer({ minimum: 1 }),
    offset: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0, description: 'Items in the whole list' }),
  },
  { additionalProperties: false },
);

export const HasMore = Type.Boolean({
  description:
    'Whether more items follow this page in the direction it was read: after it, or with `ending_before` ' +
    'before it',
});

/** A page of a list: `{ data: [...], has_more, pagination: { limit, offset, total } }`. */
export const Page = <S extends TSchema>(item: S) =>
  Type.Object(
    { data: Type.Array(item), has_more: HasMore, pagination: Pagination },
    { additionalProperties: false },
  );

/** GET /: which versions the API serves. */
export const DiscoveryView = Type.Object(
  {
    versions: Type.Array(Type.Union(API_VERSIONS.map((version) => Type.Literal(version)))),
    current_version: Type.String(),
    min_supported_version: Type.String(),
  },
  { additionalProperties: false },
);
