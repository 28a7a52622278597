import { Type, type Static } from '@sinclair/typebox';
import {
  MISMATCH_KINDS,
  PLATFORM_LOSS_REASONS,
  RECONCILIATION_CASE_STATUSES,
  RECONCILIATION_DECISIONS,
} from '../enums.js';
import { AccountView } from './accounts.js';
import { CurrencyCode, HasMore, Nullable, Page, PageQuery, Pagination, Timestamp, Uuid } from './common.js';
import { TransactionView } from './money.js';

const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));

/**
 * A withdrawal the provider may have received that got no confirmation before its hold expired. It stays pending
 * with its hold until the provider's late answer (or an operator) settles it.
 */
export const UnconfirmedWithdrawalView = Type.Object(
  {
    kind: Type.Literal('unconfirmed_withdrawal'),
    ...TransactionView.properties,
    user_id: Uuid,
    reconciliation_required_at: Timestamp,
  },
  { additionalProperties: false },
);

/** A mismatch reconciliation found between the provider's records and the books, and what became of it. */
export const ProviderMismatchView = Type.Object(
  {
    kind: literals(MISMATCH_KINDS),
    id: Uuid,
    status: literals(RECONCILIATION_CASE_STATUSES),
    provider_reference: Type.String({
      description: "The provider's object (Stripe: `pi_…`, or a payout's `tr_…`)",
    }),
    transaction_id: Nullable(Uuid),
    currency: CurrencyCode,
    provider_amount: Type.Number({ description: "Net, by the provider's records" }),
    ledger_amount: Type.Number({ description: 'Net, by the books' }),
    found_at: Timestamp,
    last_seen_at: Timestamp,
    decision: Type.Optional(literals(RECONCILIATION_DECISIONS)),
    reason: Type.Optional(Type.String()),
    resolved_by: Type.Optional(Uuid),
    resolved_at: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);

/**
 * GET /admin/reconciliation: what waits for an operator, told apart by `kind`: withdrawals awaiting their
 * confirmation, then the open mismatches with the provider's records.
 */
export const ReconciliationView = Type.Union([UnconfirmedWithdrawalView, ProviderMismatchView]);

export const ReconciliationPage = Page(ReconciliationView);

/**
 * One list across two (withdrawals, then cases), which an operator works down: paged by offset, or by cursor, the
 * `id` of an item of either kind (one settled since it was read still marks its place).
 */
export const ReconciliationQuery = Type.Object({
  ...PageQuery.properties,
  format: Type.Union([Type.Literal('json'), Type.Literal('csv')], {
    default: 'json',
    description: 'csv: the whole list as a report, unpaged',
  }),
});

/** POST /admin/reconciliation/cases/{id}/resolution. */
export const ReconciliationDecisionRequest = Type.Object(
  {
    decision: literals(RECONCILIATION_DECISIONS),
    reason: Type.String({
      minLength: 3,
      maxLength: 1000,
      description: 'Why; kept in the trail of admin actions',
    }),
  },
  { additionalProperties: false },
);

/** POST /admin/reconciliation/runs: what one run read and found. */
export const ReconciliationRunView = Type.Object(
  {
    since: Timestamp,
    cursor: Timestamp,
    checked: Type.Integer({ minimum: 0 }),
    agreed: Type.Integer({ minimum: 0 }),
    unsettled: Type.Integer({ minimum: 0 }),
    mismatches: Type.Integer({ minimum: 0 }),
    removed: Type.Integer({
      minimum: 0,
      description:
        'Records of transactions removed with their users that are not compared: withdrawals (their history ' +
        'left with them) and deposits removed before the ledger kept them. Other removed deposits are compared: ' +
        'what the provider took back since must be booked as platform losses',
    }),
    opened: Type.Integer({ minimum: 0 }),
    cleared: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** GET /admin/actions: the append-only trail of what admins did, to whose resource, and why. */
export const AdminActionView = Type.Object(
  {
    id: Uuid,
    actor: Uuid,
    action: Type.String({ description: 'What, as `<resource>.<verb>`, e.g. `webhook_endpoint.disable`' }),
    subject: Type.String({ description: 'On what, as `<resource>:<id>`' }),
    owner: Nullable(
      Type.String({
        format: 'uuid',
        description: "Whose: the user the resource belongs to; null for the platform's own",
      }),
    ),
    reason: Nullable(Type.String({ description: 'Why, as the admin said; null when they gave none' })),
    detail: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

/** GET /admin/actions: a page, of one admin's actions or on one user's resources if asked. */
export const AdminActionQuery = Type.Object({
  ...PageQuery.properties,
  actor: Type.Optional(Type.String({ format: 'uuid', description: "Only this admin's actions" })),
  owner: Type.Optional(Type.String({ format: 'uuid', description: "Only actions on this user's resources" })),
});

export const AdminActionPage = Page(AdminActionView);

/**
 * GET /admin/overdrawn-accounts: an account a refund or lost dispute took below zero (the provider took back money
 * the user had already moved on). Nothing can be withdrawn or transferred from it until deposits make it up.
 */
export const OverdrawnAccountView = Type.Object(
  {
    ...AccountView.properties,
    overdrawn_by: Type.Number({ description: 'How far the available balance is below zero' }),
  },
  { additionalProperties: false },
);

/**
 * Money the provider took back (a refund, a lost dispute) from a deposit whose user had been deleted: nobody is
 * left to owe it, so it is booked against the platform loss account, linked to the removed deposit.
 */
export const PlatformLossView = Type.Object(
  {
    id: Uuid,
    deposit_id: Uuid,
    reason: literals(PLATFORM_LOSS_REASONS),
    currency: CurrencyCode,
    amount: Type.Number({ description: 'What the provider took back' }),
    fee: Type.Number({ description: "The deposit fee's share, given back by fee revenue" }),
    loss: Type.Number({ description: 'What the platform lost: amount − fee' }),
    provider_reference: Type.String({ description: "The provider's refund or dispute" }),
    booked_at: Timestamp,
  },
  { additionalProperties: false },
);

/** Per currency: what live users owe back, next to what the platform lost for good. */
export const ExposureView = Type.Object(
  {
    currency: CurrencyCode,
    overdrawn_accounts: Type.Integer({ minimum: 0, description: 'Accounts reversals took below zero' }),
    overdrawn_total: Type.Number({
      description: "How far below zero they are in all: the users' next deposits make it up",
    }),
    losses: Type.Integer({ minimum: 0, description: 'Platform losses booked' }),
    losses_total: Type.Number({ description: 'What the platform lost in all (their `loss`)' }),
  },
  { additionalProperties: false },
);

/**
 * GET /admin/overdrawn-accounts: a page of overdrawn accounts; with it, whatever the page, the exposure per
 * currency and the latest platform losses.
 */
export const OverdrawnAccountPage = Type.Object(
  {
    data: Type.Array(OverdrawnAccountView),
    has_more: HasMore,
    pagination: Pagination,
    by_currency: Type.Array(ExposureView),
    platform_losses: Type.Array(PlatformLossView, {
      description: 'The 100 latest, newest first (`by_currency` counts every one)',
    }),
  },
  { additionalProperties: false },
);

/** GET /admin/overdrawn-accounts as the ledger answers it (@payments/client's page type shows `data` and `pagination`). */
export type OverdrawnReport = Static<typeof OverdrawnAccountPage>;
