import type Stripe from 'stripe';
import { resourceMissing, StripeApiError } from './objects.js';

/**
 * Stripe's list semantics, shared by every list endpoint: newest first, `limit` 1–100 (10 when absent), cursor paging
 * with `starting_after` or `ending_before`, and the `created` filter (`created=<t>` or `created[gt|gte|lt|lte]=<t>`,
 * Unix seconds). The stores page their own objects with listPage; the HTTP layer reads the query with readListQuery.
 */

export interface CreatedFilter {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export interface ListQuery {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  created: CreatedFilter;
  /** The endpoint's own filters (`payment_intent`, `destination`, `status`…), by name. */
  filters: Record<string, string>;
}

/** What a listed object needs for ordering and paging. */
export interface Listed {
  id: string;
  created: number;
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;
const PAGING = new Set(['limit', 'starting_after', 'ending_before']);
const CREATED_BOUNDS = ['gt', 'gte', 'lt', 'lte'] as const;

const invalid = (param: string, message: string, code?: string) =>
  new StripeApiError(400, { type: 'invalid_request_error', param, message, ...(code && { code }) });

function integerOf(param: string, raw: string): number {
  if (!/^-?\d{1,12}$/.test(raw)) throw invalid(param, `Invalid integer: ${raw}`, 'parameter_invalid_integer');
  return Number(raw);
}

/**
 * Reads a list request's query string, refusing as Stripe does a parameter the endpoint does not know (so a filter
 * it would ignore cannot pass for one it applied), a limit outside 1–100 and both cursors at once.
 */
export function readListQuery(query: URLSearchParams, filters: readonly string[] = []): ListQuery {
  const known = new Set(filters);
  const result: ListQuery = { limit: DEFAULT_LIMIT, created: {}, filters: {} };
  for (const [param, value] of query) {
    const bound = /^created\[(\w+)\]$/.exec(param)?.[1];
    if (param === 'created') {
      const at = integerOf(param, value);
      result.created = { ...result.created, gte: at, lte: at };
    } else if (bound !== undefined) {
      if (!(CREATED_BOUNDS as readonly string[]).includes(bound))
        throw invalid(param, `Received unknown parameter: ${param}`, 'parameter_unknown');
      result.created = { ...result.created, [bound]: integerOf(param, value) };
    } else if (known.has(param)) {
      result.filters[param] = value;
    } else if (!PAGING.has(param)) {
      throw invalid(param, `Received unknown parameter: ${param}`, 'parameter_unknown');
    }
  }
  const limit = query.get('limit');
  if (limit !== null) {
    result.limit = integerOf('limit', limit);
    if (result.limit < 1 || result.limit > MAX_LIMIT)
      throw invalid('limit', `Invalid limit: must be between 1 and ${MAX_LIMIT}`);
  }
  const startingAfter = query.get('starting_after');
  const endingBefore = query.get('ending_before');
  if (startingAfter && endingBefore)
    throw invalid(
      'ending_before',
      'You may only specify one of these parameters: ending_before, starting_after.',
    );
  if (startingAfter) result.startingAfter = startingAfter;
  if (endingBefore) result.endingBefore = endingBefore;
  return result;
}

/** Newest first; among objects of the same second, the greater id first, so the order is total and never changes. */
const newestFirst = (a: Listed, b: Listed) =>
  b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const inRange = ({ created }: Listed, { gt, gte, lt, lte }: CreatedFilter) =>
  (gt === undefined || created > gt) &&
  (gte === undefined || created >= gte) &&
  (lt === undefined || created < lt) &&
  (lte === undefined || created <= lte);

export interface PageOptions<T, V> {
  /** The list's path, as Stripe answers it in `url` (`/v1/payment_intents`). */
  url: string;
  /** The object's name in Stripe's error for an unknown cursor (`payment_intent`: "No such payment_intent"). */
  name: string;
  /** The endpoint's own filters; a cursor may name an object they leave out. */
  matches?: (object: T) => boolean;
  /** The object as it is answered (a copy, without what the store keeps for itself). */
  view: (object: T) => V;
}

/**
 * One page of `objects` (every object of the kind the caller may see) as Stripe lists them. A cursor is placed by
 * its object's position in the order, so it must be one of `objects`, though it need not pass the filters.
 * `ending_before` answers the `limit` objects just newer than the cursor, still newest first, as Stripe does.
 */
export function listPage<T extends Listed, V>(
  objects: Iterable<T>,
  query: ListQuery,
  options: PageOptions<T, V>,
): Stripe.ApiList<V> {
  const all = [...objects];
  const cursorOf = (param: string, id: string | undefined) => {
    if (id === undefined) return undefined;
    const found = all.find((object) => object.id === id);
    if (!found) throw resourceMissing(400, param, `No such ${options.name}: '${id}'`);
    return found;
  };
  const after = cursorOf('starting_after', query.startingAfter);
  const before = cursorOf('ending_before', query.endingBefore);
  const listed = all
    .filter(
      (object) =>
        inRange(object, query.created) &&
        (options.matches?.(object) ?? true) &&
        (!after || newestFirst(object, after) > 0) &&
        (!before || newestFirst(object, before) < 0),
    )
    .sort(newestFirst);
  const page = before ? listed.slice(-query.limit) : listed.slice(0, query.limit);
  return {
    object: 'list',
    data: page.map((object) => options.view(object)),
    has_more: listed.length > page.length,
    url: options.url,
  };
}
