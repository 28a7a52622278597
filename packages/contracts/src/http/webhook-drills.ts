import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from './common.js';
import { WebhookEventTypeSchema } from './webhook-endpoints.js';

/** The cases of a drill, in the order they are sent. */
export const WEBHOOK_DRILL_CASES = [
  'valid',
  'duplicate',
  'out_of_order_later',
  'out_of_order_earlier',
  'stale_timestamp',
  'wrong_signature',
] as const;
export type WebhookDrillCaseName = (typeof WEBHOOK_DRILL_CASES)[number];

/**
 * `passed`: the receiver did what a correct one does. `failed`: it did not. `unconfirmed`: it answered as expected
 * but the sender cannot see the rest (a duplicate answered 2xx without saying it was recognised). `not_sent`: the
 * drill's time ran out before this case.
 */
export const WEBHOOK_DRILL_OUTCOMES = ['passed', 'failed', 'unconfirmed', 'not_sent'] as const;
export type WebhookDrillOutcome = (typeof WEBHOOK_DRILL_OUTCOMES)[number];

/** A whole drill: `failed` if any case failed, else `incomplete` if one was not sent, else `unconfirmed` or `passed`. */
export const WEBHOOK_DRILL_RESULTS = ['passed', 'unconfirmed', 'incomplete', 'failed'] as const;
export type WebhookDrillResult = (typeof WEBHOOK_DRILL_RESULTS)[number];

export const WebhookDrillCaseView = Type.Object(
  {
    case: Type.Union(
      WEBHOOK_DRILL_CASES.map((name) => Type.Literal(name)),
      { description: 'What this delivery tries' },
    ),
    event_id: Type.String({ description: '`evt_drill_…`: never the id of a real event' }),
    event_type: Type.String({
      description: '`drill.` and one of your event types, e.g. `drill.transaction.completed`',
    }),
    created: Type.Integer({ description: "The event's `created` (Unix seconds)" }),
    signed_at: Type.Integer({ description: 'The `t=` of its `Stripe-Signature` (Unix seconds)' }),
    expected: Type.Union([Type.Literal('accept'), Type.Literal('reject')], {
      description: '`accept`: a 2xx answer; `reject`: any other answer',
    }),
    status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status" })),
    latency_ms: Nullable(Type.Integer({ minimum: 0 })),
    error: Nullable(Type.String({ description: 'Why no answer came (timeout, connection refused, …)' })),
    duplicate: Nullable(
      Type.Boolean({ description: 'What the receiver said in its answer (`{"duplicate": …}`), if it said' }),
    ),
    outcome: Type.Union(WEBHOOK_DRILL_OUTCOMES.map((outcome) => Type.Literal(outcome))),
    detail: Type.String({ description: 'The outcome in a sentence' }),
  },
  { additionalProperties: false },
);

/** POST /webhook-endpoints/{id}/drill: what was sent to the endpoint and how its receiver answered each. */
export const WebhookDrillView = Type.Object(
  {
    id: Type.String({ description: '`drill_…`; also `data.object.id` of every event the drill sent' }),
    object: Type.Literal('webhook_drill'),
    endpoint_id: Uuid,
    url: Type.String(),
    event_types: Type.Array(WebhookEventTypeSchema, {
      description: 'The event types the drill was built from: your most recent ones, or the endpoint’s',
    }),
    tolerance_seconds: Type.Integer({
      description:
        'The signature tolerance the stale case is measured against (the client verifier’s default)',
    }),
    result: Type.Union(WEBHOOK_DRILL_RESULTS.map((result) => Type.Literal(result))),
    cases: Type.Array(WebhookDrillCaseView),
    started_at: Timestamp,
    finished_at: Timestamp,
  },
  { additionalProperties: false },
);
export type WebhookDrillBody = Static<typeof WebhookDrillView>;

/**
 * What a drill POSTs: an event marked as a drill, never a real one. `type` is `drill.<event type>`, so no handler
 * of a real type runs; `data.object` names the drill and carries no money.
 */
export const WebhookDrillEventPayload = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('event'),
    type: Type.String(),
    api_version: Type.String(),
    created: Type.Integer(),
    created_at: Timestamp,
    drill: Type.Literal(true),
    livemode: Type.Literal(false),
    data: Type.Object({
      object: Type.Object({
        id: Type.String(),
        object: Type.Literal('webhook_drill'),
        event_type: WebhookEventTypeSchema,
      }),
    }),
  },
  { additionalProperties: false },
);
export type WebhookDrillEventBody = Static<typeof WebhookDrillEventPayload>;
