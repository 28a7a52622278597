import {
  compileSchema,
  ProviderEventRecordList,
  WebhookEventRecordList,
  type ProviderEventRecord,
  type WebhookEventRecord,
} from '@payments/contracts';
import { createServiceClient } from '@payments/service-kit';
import type { TimelinePart } from '../use-cases/admin-transactions.js';

/** A timeline waits this long for another service's part, then answers without it. */
const PART_TIMEOUT_MS = 2_000;
const checkProviderEvents = compileSchema(ProviderEventRecordList);
const checkWebhookEvents = compileSchema(WebhookEventRecordList);

/**
 * The parts of a timeline the other services hold, read from their `/internal` endpoints with the service
 * credential (ADR 0126): the ledger asks only once it has checked that its caller is an admin.
 */
export function createTimelineParts(options: {
  webhookIngestUrl: string;
  webhookDeliveryUrl: string;
  serviceToken: string;
}): {
  providerEvents: TimelinePart<ProviderEventRecord>;
  webhookEvents: TimelinePart<WebhookEventRecord>;
} {
  const client = (baseUrl: string) =>
    createServiceClient(baseUrl, { timeoutMs: PART_TIMEOUT_MS, serviceToken: options.serviceToken });
  const ingest = client(options.webhookIngestUrl);
  const delivery = client(options.webhookDeliveryUrl);
  const queryOf = ({ transactionId, references }: { transactionId: string; references: string[] }) => {
    const query = new URLSearchParams({ transaction_id: transactionId });
    for (const reference of references) query.append('reference', reference);
    return query.toString();
  };
  const read = async <T>(
    answer: Promise<{ status: number; body: unknown }>,
    check: (body: unknown) => { ok: boolean },
    what: string,
  ): Promise<{ data: T[]; hasMore: boolean }> => {
    const { status, body } = await answer;
    if (status !== 200 || !check(body).ok) throw new Error(`${what} answered ${status}`);
    const list = body as { data: T[]; has_more: boolean };
    return { data: list.data, hasMore: list.has_more };
  };
  return {
    providerEvents: {
      read: (keys) =>
        read<ProviderEventRecord>(
          ingest.get(`/internal/provider-events?${queryOf(keys)}`),
          checkProviderEvents,
          'webhook-ingest',
        ),
    },
    webhookEvents: {
      read: (keys) =>
        read<WebhookEventRecord>(
          delivery.get(`/internal/transactions/${keys.transactionId}/webhook-events`),
          checkWebhookEvents,
          'webhook-delivery',
        ),
    },
  };
}
