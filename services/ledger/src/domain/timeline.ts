import {
  toMinorUnits,
  type MinorUnits,
  type ProviderEventRecord,
  type TimelineKind,
  type TimelineSource,
  type WebhookEventRecord,
} from '@payments/contracts';
import type { Transaction } from './transaction.js';

/** One step of a transaction's story; amounts in minor units until the HTTP edge. */
export interface TimelineEntry {
  at: Date;
  kind: TimelineKind;
  source: TimelineSource;
  summary: string;
  status?: string;
  reason?: string | null;
  reference?: string;
  amount?: MinorUnits;
  currency?: string;
  accountId?: string;
  transactionId?: string;
  eventId?: string;
  eventType?: string;
  endpointId?: string;
  url?: string;
  attempt?: number;
  statusCode?: number | null;
  error?: string | null;
}

/** A row of provider_request_log: where the request stood after one step. */
export interface ProviderRequestStep {
  at: Date;
  kind: 'payment' | 'payout';
  state: string;
  attempts: number;
  reference: string | null;
  lastError: string | null;
  cancelRequested: boolean;
}

export interface StatusStep {
  at: Date;
  status: string;
  failureReason: string | null;
}

export interface Posting {
  at: Date;
  accountId: string;
  /** null: a system account (provider clearing, fees, FX, losses), named by `systemCode`. */
  userId: string | null;
  systemCode: string | null;
  amount: MinorUnits;
  currency: string;
}

/** What the ledger knows of a transaction's story. */
export interface LedgerHistory {
  provider: string | null;
  providerSteps: ProviderRequestStep[];
  statusSteps: StatusStep[];
  postings: Posting[];
  reversals: Transaction[];
}

/** Writes an amount for a person: `10.00 USD`. */
export type FormatMoney = (amount: MinorUnits, currency: string) => string;

const ORDER: Record<TimelineKind, number> = {
  created: 0,
  provider_request: 1,
  provider_response: 2,
  provider_event: 3,
  status_change: 4,
  posting: 5,
  reversal: 6,
  webhook_event: 7,
  webhook_delivery: 8,
};

const what = (kind: ProviderRequestStep['kind']) => (kind === 'payment' ? 'payment' : 'payout');

/** Each logged step of a provider request as what it was: a call made, or what the provider answered. */
function providerEntries(provider: string, steps: ProviderRequestStep[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  let previous: ProviderRequestStep | null = null;
  for (const step of steps) {
    const base = { at: step.at, source: 'ledger' as const, status: step.state };
    const reference = step.reference === null ? {} : { reference: step.reference };
    if (!previous) {
      entries.push({
        ...base,
        kind: 'provider_request',
        summary: `Recorded a request to ${provider} for a ${what(step.kind)}`,
      });
    } else if (step.state !== previous.state) {
      const answers: Record<string, string> = {
        created: `${provider} created the ${what(step.kind)}${step.reference ? ` ${step.reference}` : ''}`,
        refused: `${provider} refused the ${what(step.kind)}: ${step.lastError ?? 'no reason given'}`,
        skipped: 'Nothing was asked of the provider: the transaction ended first',
        closed:
          step.kind === 'payment'
            ? `${provider} canceled the payment`
            : `${provider} reversed the payout's transfer`,
        expired: "The request outlived the provider's idempotency keys: left to reconciliation",
      };
      entries.push({
        ...base,
        ...reference,
        kind: 'provider_response',
        summary: answers[step.state] ?? `The request is ${step.state}`,
        ...(step.lastError !== null && { error: step.lastError }),
      });
    } else if (step.attempts > previous.attempts) {
      const undo = step.state === 'created';
      entries.push({
        ...base,
        ...reference,
        kind: 'provider_request',
        attempt: step.attempts,
        summary: undo
          ? `Asked ${provider} to ${step.kind === 'payment' ? 'cancel the payment' : "reverse the payout's transfer"}`
          : `Asked ${provider} to create the ${what(step.kind)} (call ${step.attempts})`,
      });
    } else if (step.lastError !== previous.lastError && step.lastError !== null) {
      entries.push({
        ...base,
        ...reference,
        kind: 'provider_response',
        status: 'retry',
        error: step.lastError,
        summary: `The call did not go through (${step.lastError}); it will be made again`,
      });
    } else if (step.cancelRequested && !previous.cancelRequested) {
      entries.push({
        ...base,
        ...reference,
        kind: 'provider_request',
        summary: `The transaction ended: its ${what(step.kind)} is to be undone at ${provider}`,
      });
    }
    previous = step;
  }
  return entries;
}

/** Status changes as logged; a transaction older than the log shows its ending alone. */
function statusEntries(transaction: Transaction, steps: StatusStep[]): TimelineEntry[] {
  if (steps.length === 0) {
    if (transaction.status === 'pending') return [];
    return [
      {
        at: transaction.completedAt ?? transaction.updatedAt,
        kind: 'status_change',
        source: 'ledger',
        status: transaction.status,
        reason: transaction.failureReason,
        summary: `Status: ${transaction.status}`,
      },
    ];
  }
  let status = 'pending';
  return steps.map((step) => {
    const summary =
      step.status === status
        ? `Still ${step.status}: ${step.failureReason ?? 'reason cleared'}`
        : `Status: ${status} → ${step.status}${step.failureReason ? ` (${step.failureReason})` : ''}`;
    status = step.status;
    return {
      at: step.at,
      kind: 'status_change',
      source: 'ledger',
      status: step.status,
      reason: step.failureReason,
      summary,
    };
  });
}

function webhookEntries(events: WebhookEventRecord[]): TimelineEntry[] {
  return events.flatMap((event) => [
    {
      at: new Date(event.created_at),
      kind: 'webhook_event' as const,
      source: 'webhook-delivery' as const,
      eventId: event.id,
      eventType: event.type,
      summary: `Event ${event.type} for the owner's webhooks (${event.deliveries.length} endpoint(s))`,
    },
    ...event.deliveries.flatMap((delivery): TimelineEntry[] => {
      const common = {
        kind: 'webhook_delivery' as const,
        source: 'webhook-delivery' as const,
        eventId: event.id,
        eventType: event.type,
        endpointId: delivery.endpoint_id,
        url: delivery.url,
      };
      if (delivery.attempts.length === 0) {
        return [
          {
            ...common,
            at: new Date(delivery.created_at),
            status: delivery.status,
            summary: `${event.type} waits to be delivered to ${delivery.url}`,
          },
        ];
      }
      const last = delivery.attempts.length - 1;
      return delivery.attempts.map((attempt, i) => {
        const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
        const answer =
          attempt.status_code === null ? (attempt.error ?? 'no answer') : `${attempt.status_code}`;
        return {
          ...common,
          at: new Date(attempt.attempted_at),
          attempt: attempt.attempt,
          status: ok ? 'succeeded' : i === last ? delivery.status : 'failed',
          statusCode: attempt.status_code,
          error: attempt.error,
          summary: `${event.type} ${ok ? 'delivered' : 'not delivered'} to ${delivery.url}: ${answer} in ${attempt.latency_ms} ms (attempt ${attempt.attempt})`,
        };
      });
    }),
  ]);
}

function providerEventEntries(events: ProviderEventRecord[]): TimelineEntry[] {
  return events.map((event) => ({
    at: new Date(event.received_at),
    kind: 'provider_event',
    source: 'webhook-ingest',
    eventId: event.event_id,
    eventType: event.event_type,
    status: event.outcome,
    ...(event.object_id !== null && { reference: event.object_id }),
    summary: `Received ${event.event_type} on /webhook/${event.source}: ${event.outcome}`,
  }));
}

function postingSummary(posting: Posting, format: FormatMoney): string {
  const debit = posting.amount < 0n;
  const amount = format(debit ? toMinorUnits(-posting.amount) : posting.amount, posting.currency);
  const account = posting.userId ? 'the user account' : `the ${posting.systemCode ?? 'system'} account`;
  return `${debit ? 'Debited' : 'Credited'} ${amount} ${debit ? 'from' : 'to'} ${account} ${posting.accountId}`;
}

/** Everything that happened to `transaction`, oldest first (ties in the order things happen in a flow). */
export function buildTimeline(
  transaction: Transaction,
  ledger: LedgerHistory,
  providerEvents: ProviderEventRecord[],
  webhookEvents: WebhookEventRecord[],
  format: FormatMoney,
): TimelineEntry[] {
  const created: TimelineEntry = {
    at: transaction.createdAt,
    kind: 'created',
    source: 'ledger',
    status: 'pending',
    amount: transaction.amount,
    currency: transaction.currency,
    accountId: transaction.accountId,
    summary: `${transaction.type} of ${format(transaction.amount, transaction.currency)} created`,
  };
  const postings = ledger.postings.map((posting): TimelineEntry => ({
    at: posting.at,
    kind: 'posting',
    source: 'ledger',
    amount: posting.amount,
    currency: posting.currency,
    accountId: posting.accountId,
    summary: postingSummary(posting, format),
  }));
  const reversals = ledger.reversals.map((reversal): TimelineEntry => ({
    at: reversal.createdAt,
    kind: 'reversal',
    source: 'ledger',
    transactionId: reversal.id,
    status: reversal.status,
    reason: reversal.reversalReason,
    amount: reversal.amount,
    currency: reversal.currency,
    summary: `${reversal.reversalReason ?? 'reversal'} of ${format(reversal.amount, reversal.currency)}: ${reversal.status}`,
  }));
  const entries = [
    created,
    ...providerEntries(ledger.provider ?? 'the provider', ledger.providerSteps),
    ...statusEntries(transaction, ledger.statusSteps),
    ...postings,
    ...reversals,
    ...providerEventEntries(providerEvents),
    ...webhookEntries(webhookEvents),
  ];
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort(
      (a, b) =>
        a.entry.at.getTime() - b.entry.at.getTime() ||
        ORDER[a.entry.kind] - ORDER[b.entry.kind] ||
        a.index - b.index,
    )
    .map(({ entry }) => entry);
}
