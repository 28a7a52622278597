import { Type, type Static } from '@sinclair/typebox';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../enums.js';
import { CurrencyCode, Nullable, Page, PageQuery, Timestamp, Uuid } from './common.js';
import {
  METADATA_FILTER_PATTERN,
  METADATA_VALUE_MAX_LENGTH,
  REFERENCE_MAX_LENGTH,
  TransactionView,
} from './money.js';

/** A day (YYYY-MM-DD, whole UTC days) or a moment (RFC 3339). */
const DayOrMoment = (description: string) =>
  Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
    description,
  });

/** A decimal amount in major units, as amounts are written elsewhere in the API ("10.50"). */
const DecimalAmount = (description: string) =>
  Type.String({ pattern: '^\\d{1,15}(\\.\\d{1,18})?$', maxLength: 40, description });

/** The longest `q`: a whole UUID, or a provider's id. */
export const TRANSACTION_SEARCH_MAX_LENGTH = 255;

/**
 * GET /admin/transactions: every filter given must hold; `metadata[key]=value` filters too
 * (METADATA_FILTER_PATTERN). Amounts are compared in the currency's units, so they need `currency`.
 */
export const AdminTransactionQuery = Type.Object(
  {
    ...PageQuery.properties,
    type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((type) => Type.Literal(type)))),
    status: Type.Optional(Type.Union(TRANSACTION_STATUSES.map((status) => Type.Literal(status)))),
    account_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only this account’s' })),
    user_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'Only the transactions of accounts this user owns' }),
    ),
    currency: Type.Optional(
      Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Only this currency (ISO 4217, any case)' }),
    ),
    from: Type.Optional(
      DayOrMoment('Created at or after: a day (from its start, UTC) or a moment (RFC 3339)'),
    ),
    to: Type.Optional(DayOrMoment('Created at or before: a day (to its end, UTC) or a moment (RFC 3339)')),
    amount_min: Type.Optional(
      DecimalAmount('At least this amount, in major units of `currency` (required with it), e.g. "10.50"'),
    ),
    amount_max: Type.Optional(
      DecimalAmount('At most this amount, in major units of `currency` (required with it), e.g. "250"'),
    ),
    reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: REFERENCE_MAX_LENGTH,
        description: 'The `reference` its owner gave it',
      }),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: TRANSACTION_SEARCH_MAX_LENGTH,
        description:
          'The start of an id: the transaction’s own (hexadecimal digits and dashes, any case), or the ' +
          'provider’s reference for its payment or payout (e.g. a PaymentIntent `pi_…`)',
      }),
    ),
  },
  {
    // An operator's misspelt filter would otherwise widen the search to everything, silently.
    additionalProperties: false,
    patternProperties: {
      [METADATA_FILTER_PATTERN]: Type.String({
        maxLength: METADATA_VALUE_MAX_LENGTH,
        description: 'Only transactions whose metadata holds each of these pairs: `metadata[order]=8812`',
      }),
    },
  },
);

/** Where a transaction stands with the payment provider, as operators see it: never the client secret. */
export const AdminProviderPaymentView = Type.Object(
  {
    provider: Type.String({ description: 'The payment provider asked (`stripe`)' }),
    kind: Type.Union([Type.Literal('payment'), Type.Literal('payout')]),
    reference: Nullable(
      Type.String({ description: "The provider's id (Stripe: the PaymentIntent, or the payout's transfer)" }),
    ),
    state: Type.Union(
      ['requested', 'created', 'refused', 'skipped', 'closed', 'expired'].map((state) => Type.Literal(state)),
      {
        description:
          '`requested` until the provider made it, `created` once it did, `refused` by it, `skipped` (the ' +
          'transaction ended first), `closed` (undone at the provider), `expired` (left to an operator)',
      },
    ),
    attempts: Type.Integer({ minimum: 0, description: 'Calls made so far' }),
    last_error: Nullable(Type.String({ description: 'What the last call that did not go through answered' })),
  },
  { additionalProperties: false },
);

const { provider_payment: _ownersView, ...transactionFields } = TransactionView.properties;

/** A transaction as an operator lists it: the owner's view without the client secret, and whose it is. */
export const AdminTransactionView = Type.Object(
  {
    ...transactionFields,
    user_id: Nullable(Uuid),
    counterparty_user_id: Nullable(Uuid),
    provider_payment: Type.Optional(AdminProviderPaymentView),
  },
  { additionalProperties: false },
);

export const AdminTransactionPage = Page(AdminTransactionView);

export const TIMELINE_SOURCES = ['ledger', 'webhook-ingest', 'webhook-delivery'] as const;
export type TimelineSource = (typeof TIMELINE_SOURCES)[number];

export const TIMELINE_KINDS = [
  'created',
  'provider_request',
  'provider_response',
  'provider_event',
  'posting',
  'status_change',
  'reversal',
  'webhook_event',
  'webhook_delivery',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** One thing that happened to a transaction, with what an operator needs to follow it. */
export const TimelineEntryView = Type.Object(
  {
    at: Timestamp,
    kind: Type.Union(
      TIMELINE_KINDS.map((kind) => Type.Literal(kind)),
      {
        description:
          '`created`; `provider_request` (the ledger recorded or made a call to the provider) and ' +
          '`provider_response` (what it answered: created, refused, an error to retry); `provider_event` (an event ' +
          'the provider sent about it, as received); `posting` (one entry of the journal); `status_change`; ' +
          '`reversal` (a refund, dispute, returned payout or late payment linked to it, with its own status); ' +
          '`webhook_event` (an event about it for its owner’s webhooks) and `webhook_delivery` (one attempt to ' +
          'deliver it to one endpoint)',
      },
    ),
    source: Type.Union(
      TIMELINE_SOURCES.map((source) => Type.Literal(source)),
      {
        description: 'The service that recorded it',
      },
    ),
    summary: Type.String({ description: 'One line for a person' }),
    status: Type.Optional(
      Type.String({
        description: 'The status it reached: a transaction’s, a provider request’s, a delivery’s',
      }),
    ),
    reason: Type.Optional(Nullable(Type.String({ description: 'A failure’s or reversal’s reason' }))),
    reference: Type.Optional(Type.String({ description: 'The provider’s id of what the entry is about' })),
    amount: Type.Optional(Type.Number({ description: 'In major units of `currency`; a debit is negative' })),
    currency: Type.Optional(CurrencyCode),
    account_id: Type.Optional(Uuid),
    transaction_id: Type.Optional(Uuid),
    event_id: Type.Optional(Type.String({ description: 'The provider’s event id, or our event’s' })),
    event_type: Type.Optional(Type.String()),
    endpoint_id: Type.Optional(Uuid),
    url: Type.Optional(Type.String({ description: 'The webhook endpoint delivered to' })),
    attempt: Type.Optional(Type.Integer({ minimum: 1 })),
    status_code: Type.Optional(Nullable(Type.Integer())),
    error: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);

const SourceState = Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]);

/** GET /admin/transactions/{id}/timeline. */
export const TransactionTimelineView = Type.Object(
  {
    transaction: AdminTransactionView,
    entries: Type.Array(TimelineEntryView, { description: 'Oldest first' }),
    sources: Type.Object(
      {
        ledger: SourceState,
        'webhook-ingest': SourceState,
        'webhook-delivery': SourceState,
      },
      {
        additionalProperties: false,
        description: 'Whether each service answered its part; an `unavailable` one’s entries are missing',
      },
    ),
    truncated: Type.Boolean({
      description: 'Whether a part had more entries than a timeline shows (each part keeps its newest 200)',
    }),
  },
  { additionalProperties: false },
);

/**
 * The parts the other services give the ledger for a timeline (internal reads, authorised by the service
 * credential, ADR 0126): what webhook-ingest received about a transaction or its provider references.
 */
export const ProviderEventRecordView = Type.Object(
  {
    event_id: Type.String(),
    source: Type.String(),
    event_type: Type.String(),
    outcome: Type.String(),
    object_id: Nullable(Type.String()),
    received_at: Timestamp,
    published_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export const ProviderEventRecordList = Type.Object(
  { data: Type.Array(ProviderEventRecordView), has_more: Type.Boolean() },
  { additionalProperties: false },
);
export type ProviderEventRecord = Static<typeof ProviderEventRecordView>;

/** What webhook-delivery holds about a transaction: its events, each with its deliveries and their attempts. */
export const WebhookAttemptRecordView = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    status_code: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    latency_ms: Type.Integer(),
    attempted_at: Timestamp,
  },
  { additionalProperties: false },
);
export const WebhookDeliveryRecordView = Type.Object(
  {
    id: Uuid,
    endpoint_id: Uuid,
    url: Type.String(),
    status: Type.String(),
    created_at: Timestamp,
    attempts: Type.Array(WebhookAttemptRecordView),
  },
  { additionalProperties: false },
);
export const WebhookEventRecordView = Type.Object(
  {
    id: Uuid,
    type: Type.String(),
    created_at: Timestamp,
    deliveries: Type.Array(WebhookDeliveryRecordView),
  },
  { additionalProperties: false },
);
export const WebhookEventRecordList = Type.Object(
  { data: Type.Array(WebhookEventRecordView), has_more: Type.Boolean() },
  { additionalProperties: false },
);
export type WebhookEventRecord = Static<typeof WebhookEventRecordView>;
