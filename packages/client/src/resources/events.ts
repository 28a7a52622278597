import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type { CursorPage, EventListQuery, WebhookEvent } from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

/** Your events of the last 30 days, each the body its webhook carries: to read, or to catch up on after an outage. */
export function eventsResource({ transport }: ResourceDeps) {
  const listPage = async ({ created, ...query }: EventListQuery = {}, options?: RequestOptions) =>
    transport.body<CursorPage<WebhookEvent>>('listEvents', {
      // `created: { gte }` is sent as `created[gte]=…`.
      query: { ...query, ...(created && { created: bounds(created) }) },
      options,
    });

  return {
    /**
     * Every event, newest first, page after page by cursor (`starting_after` the last one of each); `type` and
     * `created: { gte, lte, gt, lt }` (Unix seconds) narrow them.
     */
    list: (
      query: EventListQuery = {},
      options?: RequestOptions,
    ): PagedList<WebhookEvent, CursorPage<WebhookEvent>> =>
      pagedList((window) => listPage({ ...query, ...window }, options), query),
    listPage,
    /** One of your events; another user's, or one older than 30 days, is a NotFoundError. */
    async get(eventId: string, options?: RequestOptions): Promise<WebhookEvent> {
      return transport.body<WebhookEvent>('getEvent', { params: { id: eventId }, options });
    },
  };
}

function bounds(created: NonNullable<EventListQuery['created']>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(created).flatMap(([name, seconds]) =>
      seconds === undefined ? [] : [[name, String(seconds)]],
    ),
  );
}
