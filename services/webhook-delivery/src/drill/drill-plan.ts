import { randomBytes } from 'node:crypto';
import type {
  ApiVersion,
  WebhookDrillCaseName,
  WebhookDrillEventBody,
  WebhookDrillOutcome,
  WebhookDrillResult,
  WebhookEventType,
} from '@payments/contracts';

/** How a case is signed: with the endpoint's secrets now, long ago, or with a secret nobody holds. */
export type Signing = 'now' | 'stale' | 'forged';

export interface PlannedCase {
  name: WebhookDrillCaseName;
  eventId: string;
  eventType: string;
  created: number;
  /** The exact bytes POSTed (the duplicate sends the valid case's bytes again). */
  body: string;
  signing: Signing;
  expected: 'accept' | 'reject';
  /** Which delivery of the event this is (the duplicate is the second). */
  attempt: number;
}

export interface DrillPlan {
  id: string;
  eventTypes: WebhookEventType[];
  cases: PlannedCase[];
}

/** What came back for one case; `statusCode` null when nothing did. */
export interface CaseAnswer {
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  body: string | null;
}

export interface JudgedCase {
  outcome: WebhookDrillOutcome;
  duplicate: boolean | null;
  detail: string;
}

/** How far before now the stale case is signed, in units of the verifier's tolerance. */
const STALE_FACTOR = 2;
/** How much earlier the "earlier" out-of-order event was created than the "later" one. */
const ORDER_GAP_SECONDS = 60;

const token = () => randomBytes(12).toString('hex');

/** `drill_…`: the drill's id, in every event it sends (`data.object.id`) and in its limits' record. */
export const newDrillId = () => `drill_${token()}`;

/** Seconds before now the stale case is signed: twice the tolerance, so any verifier near it refuses. */
export const staleBySeconds = (toleranceSeconds: number) => STALE_FACTOR * toleranceSeconds;

/**
 * The drill's events: each a fresh `evt_drill_…` id (the duplicate reuses the valid one's), typed `drill.<type>` so
 * no handler of a real type runs, and cycling through `eventTypes` (the user's recent ones, or the endpoint's).
 */
export function planDrill(
  id: string,
  eventTypes: readonly WebhookEventType[],
  apiVersion: ApiVersion,
  nowSeconds: number,
): DrillPlan {
  if (eventTypes.length === 0) throw new Error('a drill needs at least one event type');
  let next = 0;
  const event = (created: number) => {
    const type = eventTypes[next % eventTypes.length] as WebhookEventType;
    next += 1;
    const body: WebhookDrillEventBody = {
      id: `evt_drill_${token()}`,
      object: 'event',
      type: `drill.${type}`,
      api_version: apiVersion,
      created,
      created_at: new Date(created * 1000).toISOString(),
      drill: true,
      livemode: false,
      data: { object: { id, object: 'webhook_drill', event_type: type } },
    };
    return { eventId: body.id, eventType: body.type, created, body: JSON.stringify(body) };
  };
  const valid = event(nowSeconds);
  const later = event(nowSeconds);
  const earlier = event(nowSeconds - ORDER_GAP_SECONDS);
  const accept = { signing: 'now', expected: 'accept', attempt: 1 } as const;
  return {
    id,
    eventTypes: [...eventTypes],
    cases: [
      { name: 'valid', ...valid, ...accept },
      { name: 'duplicate', ...valid, ...accept, attempt: 2 },
      { name: 'out_of_order_later', ...later, ...accept },
      { name: 'out_of_order_earlier', ...earlier, ...accept },
      { name: 'stale_timestamp', ...event(nowSeconds), signing: 'stale', expected: 'reject', attempt: 1 },
      { name: 'wrong_signature', ...event(nowSeconds), signing: 'forged', expected: 'reject', attempt: 1 },
    ],
  };
}

/** `{"duplicate": true|false}` in the answer's body, if the receiver said so; null otherwise. */
export function duplicateClaimOf(body: string | null): boolean | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as { duplicate?: unknown } | null;
    return typeof parsed?.duplicate === 'boolean' ? parsed.duplicate : null;
  } catch {
    return null;
  }
}

const accepted = (status: number | null) => status !== null && status >= 200 && status < 300;

/** Whether the receiver did, for one case, what a correct receiver does. */
export function judgeCase(planned: PlannedCase, answer: CaseAnswer, toleranceSeconds: number): JudgedCase {
  const duplicate = duplicateClaimOf(answer.body);
  const said =
    answer.statusCode === null ? `no answer (${answer.error ?? 'failed'})` : `${answer.statusCode}`;
  const judged = (outcome: WebhookDrillOutcome, detail: string): JudgedCase => ({
    outcome,
    duplicate,
    detail,
  });
  if (planned.expected === 'reject') {
    const what =
      planned.signing === 'stale'
        ? `signed ${staleBySeconds(toleranceSeconds)} s ago (tolerance ${toleranceSeconds} s)`
        : 'signed with a secret that is not yours';
    if (accepted(answer.statusCode)) {
      return judged(
        'failed',
        `Accepted (${said}) an event ${what}: verify Stripe-Signature on the raw body, timestamp included, before acting`,
      );
    }
    if (answer.statusCode === null) {
      return judged('failed', `Sent an event ${what}, but got ${said}: a receiver must answer, with a 4xx`);
    }
    return judged('passed', `Rejected (${said}) an event ${what}`);
  }
  if (!accepted(answer.statusCode)) {
    return judged(
      'failed',
      planned.name === 'duplicate'
        ? `Answered ${said} to a duplicate: answer 2xx to an event id already processed (and skip it), or it is sent again`
        : `Answered ${said} to a valid drill event: verify it, then answer 2xx to every event, types you do not ` +
            'handle (drill.*) included',
    );
  }
  if (planned.name !== 'duplicate') {
    if (duplicate === true) {
      return judged('failed', `Said {"duplicate": true} of an event it had never been sent`);
    }
    return judged(
      'passed',
      planned.name === 'out_of_order_earlier'
        ? `Accepted (${said}) an event created ${ORDER_GAP_SECONDS} s before the one it got just before`
        : `Accepted (${said})`,
    );
  }
  if (duplicate === true)
    return judged('passed', `Accepted (${said}) and said it had processed ${planned.eventId} already`);
  if (duplicate === false) {
    return judged('failed', `Accepted (${said}) and said it processed ${planned.eventId} a second time`);
  }
  return judged(
    'unconfirmed',
    `Accepted (${said}), as expected; whether it acted on ${planned.eventId} twice cannot be seen from here: check ` +
      'your logs, or answer {"duplicate": true} to an event id you have processed',
  );
}

/** The drill as a whole: any failure fails it; else a case not sent leaves it incomplete. */
export function drillResult(outcomes: readonly WebhookDrillOutcome[]): WebhookDrillResult {
  if (outcomes.includes('failed')) return 'failed';
  if (outcomes.includes('not_sent')) return 'incomplete';
  if (outcomes.includes('unconfirmed')) return 'unconfirmed';
  return 'passed';
}
