import { startPoller, type Logger } from '@payments/service-kit';
import type { EventRepository, StoredEvent } from '../data/event-repository.js';
import type { ObjectRenderer } from '../data/object-renderer.js';
import { eventPayload } from '../domain/event-payload.js';

/** How many events one run renders, and how many of them at once. */
const BATCH = 50;
const AT_ONCE = 8;

/** `fn` over `items`, at most AT_ONCE at a time (each render is a call to the event's owner), in order. */
export async function mapAtMostFew<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += AT_ONCE)
    results.push(...(await Promise.all(items.slice(i, i + AT_ONCE).map(fn))));
  return results;
}

export interface EventRendering {
  /**
   * The body an event keeps: rendered once (its object fetched from its owner at the event's version) and kept,
   * so every reader, and a webhook at that version, gets the same bytes. Throws while the owner is unreachable.
   */
  payloadOf(event: StoredEvent): Promise<string>;
}

export function createEventRendering(deps: {
  events: EventRepository;
  renderer: ObjectRenderer;
}): EventRendering {
  return {
    async payloadOf(stored) {
      if (stored.payload !== null) return stored.payload;
      const object = await deps.renderer.render(stored.event, stored.apiVersion);
      const payload = eventPayload(stored.event, object, stored.apiVersion);
      // Whoever rendered it first (a delivery, a read, the renderer) fixed it: that body is kept.
      return (await deps.events.fixPayload(stored.id, payload)) ?? payload;
    },
  };
}

/**
 * Renders events shortly after they arrive, so that an event shows its object as it was then, as its webhook did,
 * not as it is when someone reads it later. One that cannot be rendered now is tried again with a backoff (the
 * claim's); a read renders it meanwhile if it can.
 */
export function startEventRenderer(deps: {
  events: EventRepository;
  rendering: EventRendering;
  logger: Logger;
  pollMs: number;
}): { wake(): void; stop(): Promise<void> } {
  const render = async (event: StoredEvent) => {
    try {
      await deps.rendering.payloadOf(event);
    } catch (error) {
      deps.logger.warn({ err: error, event_id: event.id }, 'could not render an event; will retry');
    }
  };
  const poller = startPoller({
    intervalMs: deps.pollMs,
    task: async () => {
      const due = await deps.events.claimUnrendered(BATCH);
      await mapAtMostFew(due, render);
      return due.length > 0;
    },
    onError: (error) => deps.logger.warn({ err: error }, 'could not claim events to render'),
  });
  poller.wake();
  return { wake: () => poller.wake(), stop: () => poller.stop() };
}
