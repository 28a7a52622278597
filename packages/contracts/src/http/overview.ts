import { Type } from '@sinclair/typebox';
import { MISMATCH_KINDS } from '../enums.js';
import { QUEUES } from '../queues.js';
import { CurrencyCode, HasMore, Nullable, Timestamp, Uuid } from './common.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Rate = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 1, description }));
const QueueName = Type.Union(
  Object.keys(QUEUES).map((key) => Type.Literal(key)),
  { description: 'A consumer queue, named by the service that consumes it' },
);

/** GET /admin/overview. */
export const OverviewQuery = Type.Object(
  {
    window: Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      default: 'hour',
      description:
        '`hour`: the last hour in 1-minute buckets (60); `day`: the last day in 15-minute buckets (96)',
    }),
  },
  { additionalProperties: false },
);

/** Of the transactions of a type created in a bucket: how many, and how many of those have completed or failed. */
export const MovementCountsView = Type.Object(
  {
    created: Count('Created in the bucket'),
    completed: Count('Of those, completed since'),
    failed: Count('Of those, failed since'),
  },
  { additionalProperties: false },
);

const activity = {
  deposits: MovementCountsView,
  withdrawals: MovementCountsView,
  transfers: MovementCountsView,
  failure_rate: Rate(
    'Failed among those that ended (completed or failed), all three types; null when none ended',
  ),
  card_attempts: Count('Card payment attempts that ended at the provider: declined, or taken'),
  card_declines: Count('Card payment attempts the provider declined'),
  decline_rate: Rate('card_declines / card_attempts; null without attempts'),
};

export const OverviewBucketView = Type.Object(
  { start: Timestamp, ...activity },
  { additionalProperties: false },
);

/**
 * GET /admin/overview: the window's activity from the books, and the platform's current gauges. A part that could
 * not be read within its time is null (or its count is) and named in `missing`.
 */
export const OverviewView = Type.Object(
  {
    window: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    bucket_seconds: Type.Integer({ minimum: 1, description: 'The width of each bucket' }),
    from: Nullable(Timestamp),
    to: Nullable(Timestamp),
    series: Nullable(
      Type.Array(OverviewBucketView, {
        description: 'Every bucket of the window, oldest first; the last is partial',
      }),
    ),
    totals: Nullable(Type.Object(activity, { additionalProperties: false })),
    reconciliation: Nullable(
      Type.Object(
        {
          unconfirmed_withdrawals: Count('Withdrawals awaiting their confirmation past their hold expiry'),
          open_cases: Count('Open mismatches with the provider’s records'),
          open_cases_by_kind: Type.Object(
            Object.fromEntries(MISMATCH_KINDS.map((kind) => [kind, Count(kind)])),
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
    ),
    provider_requests: Nullable(
      Type.Object(
        {
          waiting: Count('Requests to the payment provider not yet done'),
          oldest_seconds: Type.Number({ minimum: 0, description: 'How long the oldest of them has waited' }),
        },
        { additionalProperties: false },
      ),
    ),
    dead_letters: Type.Array(
      Type.Object(
        { queue: QueueName, count: Nullable(Count('Dead letters it holds')) },
        { additionalProperties: false },
      ),
    ),
    queues: Type.Array(
      Type.Object(
        { queue: QueueName, depth: Nullable(Count('Messages ready for its consumers')) },
        { additionalProperties: false },
      ),
    ),
    outbox: Type.Array(
      Type.Object(
        {
          service: Type.Union([Type.Literal('ledger'), Type.Literal('identity')]),
          oldest_unpublished_seconds: Nullable(
            Type.Number({
              minimum: 0,
              description: 'Age of the oldest event not yet published (0: none waits)',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    webhook_deliveries_pending: Nullable(
      Count('Outgoing webhook deliveries not yet delivered nor given up on (the delivery queue)'),
    ),
    missing: Type.Array(
      Type.Object(
        {
          part: Type.String({ description: 'e.g. `series`, `outbox.identity`, `queues.ledger`' }),
          detail: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'The parts left out of this answer, and why; empty when all answered' },
    ),
    generated_at: Timestamp,
  },
  { additionalProperties: false },
);

/** GET /admin/chargeback-exposure. */
export const ChargebackExposureQuery = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'Users at most, largest first',
    }),
    currency: Type.Optional(CurrencyCode),
  },
  { additionalProperties: false },
);

export const UserExposureView = Type.Object(
  {
    user_id: Uuid,
    currency: CurrencyCode,
    exposure: Type.Number({
      description: 'What charging back every one of those deposits would cost the platform',
    }),
    deposits_in_window: Type.Number({
      description:
        'The card deposits completed within the window, less what was refunded or disputed of them',
    }),
    balance: Type.Number({ description: 'What the accounts holding those deposits hold now' }),
  },
  { additionalProperties: false },
);

export const CurrencyExposureView = Type.Object(
  {
    currency: CurrencyCode,
    exposure: Type.Number({ description: 'The users’ exposures in all' }),
    exposed_users: Count('Users with an exposure'),
    deposits_in_window: Type.Number({ description: 'Card deposits of the window not reversed, in all' }),
  },
  { additionalProperties: false },
);

/** GET /admin/chargeback-exposure: per currency, and the users with an exposure, largest first. */
export const ChargebackExposureView = Type.Object(
  {
    window_days: Type.Integer({ minimum: 1, description: 'The dispute window (DISPUTE_WINDOW_DAYS)' }),
    since: Timestamp,
    by_currency: Type.Array(CurrencyExposureView),
    data: Type.Array(UserExposureView),
    has_more: HasMore,
  },
  { additionalProperties: false },
);
