import { Router, type Request, type RequestHandler } from 'express';
import { EventListQuery } from '@payments/contracts';
import { AppError, authRequired, notFound, pageRequestOf, queryValidator } from '@payments/service-kit';
import type { EventFilter, EventRepository, StoredEvent } from '../data/event-repository.js';
import { mapAtMostFew, type EventRendering } from '../delivery/event-rendering.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const readEventQuery = queryValidator(EventListQuery);

/** Whose events: always the caller's own, an admin's too (as Stripe's keys read their own account's events). */
function ownerOf(req: Request): string {
  if (!req.auth) throw authRequired();
  return req.auth.userId;
}

/** `created[…]` in Unix seconds as bounds on `created_at`: an event's `created` is its second, rounded down. */
function createdBounds(query: {
  'created[gte]'?: number;
  'created[gt]'?: number;
  'created[lte]'?: number;
  'created[lt]'?: number;
}): Pick<EventFilter, 'from' | 'before'> {
  const froms = [
    query['created[gte]'],
    query['created[gt]'] === undefined ? undefined : query['created[gt]'] + 1,
  ];
  const befores = [
    query['created[lt]'],
    query['created[lte]'] === undefined ? undefined : query['created[lte]'] + 1,
  ];
  const from = Math.max(...froms.filter((s) => s !== undefined));
  const before = Math.min(...befores.filter((s) => s !== undefined));
  return {
    ...(Number.isFinite(from) && { from: new Date(from * 1000) }),
    ...(Number.isFinite(before) && { before: new Date(before * 1000) }),
  };
}

export function eventRoutes(
  auth: RequestHandler,
  deps: { events: EventRepository; rendering: EventRendering },
): Router {
  const router = Router();

  /** The event as its webhook carries it; one not rendered yet is rendered now, or the read is a 503 to retry. */
  const bodyOf = async (event: StoredEvent): Promise<unknown> => {
    try {
      return JSON.parse(await deps.rendering.payloadOf(event));
    } catch (error) {
      if (error instanceof SyntaxError) throw error;
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'This event cannot be rendered yet; try again shortly',
        undefined,
        {
          'Retry-After': '5',
        },
      );
    }
  };

  router.get('/events', auth, async (req, res) => {
    const userId = ownerOf(req);
    const query = readEventQuery(req);
    const { limit, cursor } = pageRequestOf(query);
    const page = await deps.events.list(
      userId,
      { ...(query.type && { type: query.type }), ...createdBounds(query) },
      { limit, ...(cursor && { cursor }) },
    );
    // Events the renderer has not reached yet are rendered here, a few at a time.
    const data = await mapAtMostFew(page.data, bodyOf);
    res.set('Cache-Control', 'no-store').json({ data, has_more: page.hasMore });
  });

  router.get('/events/:id', auth, async (req, res) => {
    const userId = ownerOf(req);
    const id = req.params.id;
    // Another user's event is not found, exactly as one that never was: its existence is not theirs to learn.
    const event =
      typeof id === 'string' && UUID.test(id) ? await deps.events.find(userId, id.toLowerCase()) : null;
    if (!event) throw notFound('Event');
    res.set('Cache-Control', 'no-store').json(await bodyOf(event));
  });

  return router;
}
