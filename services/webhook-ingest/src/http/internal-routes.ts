import type { Express, Request } from 'express';
import { validationError } from '@payments/service-kit';
import type { WebhookEventRepository } from '../data/webhook-event-repository.js';

/** The most events one read answers: a timeline's part (ADR 0126). */
const EVENTS_LIMIT = 200;
const MAX_KEYS = 20;
const KEY = /^[\w-]{1,200}$/;

/** `transaction_id` and each `reference`: the ids an event may name. */
function keysOf(req: Request): string[] {
  const values = [req.query.transaction_id, req.query.reference].flat();
  const keys = values.filter((value): value is string => typeof value === 'string');
  if (keys.length !== values.filter((value) => value !== undefined).length || keys.length === 0) {
    throw validationError([{ field: 'transaction_id', message: 'is required' }], 'Invalid query parameters');
  }
  if (keys.length > MAX_KEYS || !keys.every((key) => KEY.test(key))) {
    throw validationError([{ field: 'reference', message: 'must be ids' }], 'Invalid query parameters');
  }
  return keys;
}

/**
 * Reads for the other services, behind the service credential (`/internal`, checked by the app for every path):
 * the provider events received about a transaction, for the ledger's timeline, which asks only for admins.
 */
export function mountInternalRoutes(app: Express, deps: { events: WebhookEventRepository }): void {
  app.get('/internal/provider-events', async (req, res) => {
    const { data, hasMore } = await deps.events.findNaming(keysOf(req), EVENTS_LIMIT);
    res.set('Cache-Control', 'no-store').json({
      data: data.map((event) => ({
        event_id: event.eventId,
        source: event.source,
        event_type: event.type,
        outcome: event.outcome,
        object_id: event.objectId,
        received_at: event.receivedAt.toISOString(),
        published_at: event.publishedAt?.toISOString() ?? null,
      })),
      has_more: hasMore,
    });
  });
}
