import { MISMATCH_KINDS, type QueueKey } from '@payments/contracts';
import { DEAD_LETTER_QUEUES } from '@payments/contracts/operations';
import type { Logger } from '@payments/service-kit';
import {
  bucketsOf,
  OVERVIEW_WINDOWS,
  type ActivityBucket,
  type CountRow,
  type MovementRow,
  type OverviewWindow,
} from '../domain/overview.js';
import type { MismatchKind } from '../domain/reconciliation.js';

/** What the overview reads from the ledger's own database. */
export interface OverviewStore {
  /** The window's rows, bucketed by the database's clock; `from` is the first bucket's start. */
  activity(
    bucketSeconds: number,
    buckets: number,
  ): Promise<{ from: Date; to: Date; movements: MovementRow[]; declines: CountRow[]; payments: CountRow[] }>;
  openCaseCounts(): Promise<ReadonlyMap<string, number>>;
  countUnconfirmedWithdrawals(): Promise<number>;
  providerBacklog(): Promise<{ waiting: number; oldestSeconds: number }>;
  outboxAgeSeconds(): Promise<number>;
}

/** The broker's counts, read with passive declares (amqplib's checkQueue). */
export interface BrokerCounts {
  countQueued(queue: QueueKey): Promise<number>;
  countDeadLetters(queue: QueueKey): Promise<number>;
}

/** Another service's `/metrics`, as samples by name. */
export type ServiceMetricsReader = (service: 'identity' | 'webhook-delivery') => Promise<Map<string, number>>;

export interface OverviewOptions {
  store: OverviewStore;
  broker: BrokerCounts;
  readMetrics: ServiceMetricsReader;
  /** How long each part may take before the answer goes without it. */
  partTimeoutMs: number;
  /** Where the reason a part failed goes: the answer says only that it did. */
  logger: Logger;
}

/** A part of the overview that could not be read in time, and why, in words of our own. */
export interface MissingPart {
  part: string;
  detail: string;
}

export interface Overview {
  window: OverviewWindow;
  bucketSeconds: number;
  from: Date | null;
  to: Date | null;
  series: ActivityBucket[] | null;
  reconciliation: { unconfirmedWithdrawals: number; openCases: Map<MismatchKind, number> } | null;
  providerRequests: { waiting: number; oldestSeconds: number } | null;
  deadLetters: { queue: QueueKey; count: number | null }[];
  queues: { queue: QueueKey; depth: number | null }[];
  outbox: { service: 'ledger' | 'identity'; oldestUnpublishedSeconds: number | null }[];
  webhookDeliveriesPending: number | null;
  missing: MissingPart[];
}

export interface Overviews {
  read(window: OverviewWindow): Promise<Overview>;
}

class PartTimeout extends Error {}

/** `work`, or after `ms` a PartTimeout; the work itself is left to finish on its own (its answer unused). */
function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PartTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work(), timeout]).finally(() => clearTimeout(timer));
}

/**
 * What an admin is told of a failed part. Only a timeout's own words: a driver's or the network's message may name
 * hosts, SQL or credentials, so it goes to the log.
 */
const UNREADABLE = "could not be read (the ledger's log says why)";

/**
 * The admin overview (ADR 0127): the window's activity from the ledger's own books, and the current gauges from
 * the ledger, the broker and the other services' `/metrics`, each part read at once and bounded in time. A part
 * that fails or is late is left out (null) and named in `missing`; the rest is answered all the same.
 */
export function createOverviews({
  store,
  broker,
  readMetrics,
  partTimeoutMs,
  logger,
}: OverviewOptions): Overviews {
  return {
    async read(window) {
      const missing: MissingPart[] = [];
      const part = async <T>(name: string, work: () => Promise<T>): Promise<T | null> => {
        try {
          return await within(partTimeoutMs, work);
        } catch (error) {
          if (error instanceof PartTimeout) missing.push({ part: name, detail: error.message });
          else {
            logger.warn({ err: error, part: name }, 'an overview part could not be read');
            missing.push({ part: name, detail: UNREADABLE });
          }
          return null;
        }
      };
      // One read of each service's metrics serves every gauge it has.
      const metricsOf = (service: 'identity' | 'webhook-delivery') => {
        let reading: Promise<Map<string, number>> | undefined;
        return () => (reading ??= readMetrics(service));
      };
      const identity = metricsOf('identity');
      const delivery = metricsOf('webhook-delivery');
      const gauge = async (read: () => Promise<Map<string, number>>, name: string) => {
        const value = (await read()).get(name);
        if (value === undefined) throw new Error(`${name} is not among its metrics`);
        return value;
      };
      const { bucketSeconds, buckets } = OVERVIEW_WINDOWS[window];

      const [activity, cases, unconfirmed, providerRequests, ledgerOutbox, identityOutbox, pending] =
        await Promise.all([
          part('series', () => store.activity(bucketSeconds, buckets)),
          part('reconciliation', () => store.openCaseCounts()),
          part('reconciliation', () => store.countUnconfirmedWithdrawals()),
          part('provider_requests', () => store.providerBacklog()),
          part('outbox.ledger', () => store.outboxAgeSeconds()),
          part('outbox.identity', () => gauge(identity, 'outbox_oldest_unpublished_seconds')),
          part('webhook_deliveries', () => gauge(delivery, 'webhook_delivery_queue_depth')),
        ]);
      const [deadLetters, queues] = await Promise.all([
        Promise.all(
          DEAD_LETTER_QUEUES.map(async (queue) => ({
            queue,
            count: await part(`dead_letters.${queue}`, () => broker.countDeadLetters(queue)),
          })),
        ),
        Promise.all(
          DEAD_LETTER_QUEUES.map(async (queue) => ({
            queue,
            depth: await part(`queues.${queue}`, () => broker.countQueued(queue)),
          })),
        ),
      ]);

      const openCases = new Map(MISMATCH_KINDS.map((kind) => [kind, cases?.get(kind) ?? 0]));
      return {
        window,
        bucketSeconds,
        from: activity?.from ?? null,
        to: activity?.to ?? null,
        series: activity && bucketsOf(activity.from, bucketSeconds, buckets, activity),
        reconciliation:
          cases && unconfirmed !== null ? { unconfirmedWithdrawals: unconfirmed, openCases } : null,
        providerRequests,
        deadLetters,
        queues,
        outbox: [
          { service: 'ledger', oldestUnpublishedSeconds: ledgerOutbox },
          { service: 'identity', oldestUnpublishedSeconds: identityOutbox },
        ],
        webhookDeliveriesPending: pending,
        // A part read twice (reconciliation's two counts) is named once.
        missing: missing.filter((m, i) => missing.findIndex((other) => other.part === m.part) === i),
      };
    },
  };
}
