import { expect } from 'chai';
import { createPaymentsClient } from '../src/index.js';

interface Item {
  id: string;
}

/**
 * A list served as the API serves it, newest first: `starting_after` / `ending_before` by id, and (for the lists that
 * have one) `offset`. `grow` runs after each answer, as new items arriving while someone pages.
 */
function fakeList(initial: number, grow: (items: Item[]) => void, withPagination = true) {
  const items: Item[] = Array.from({ length: initial }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(initial - i).padStart(12, '0')}`,
  }));
  const requests: URLSearchParams[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    const query = url.searchParams;
    requests.push(query);
    const limit = Number(query.get('limit') ?? 20);
    const after = query.get('starting_after');
    const before = query.get('ending_before');
    let page: Item[];
    let hasMore: boolean;
    if (before !== null) {
      const end = items.findIndex((item) => item.id === before);
      page = items.slice(Math.max(0, end - limit), end);
      hasMore = end - limit > 0;
    } else {
      const start =
        after !== null ? items.findIndex((item) => item.id === after) + 1 : Number(query.get('offset') ?? 0);
      page = items.slice(start, start + limit);
      hasMore = start + limit < items.length;
    }
    const body = {
      data: page,
      has_more: hasMore,
      ...(withPagination && {
        pagination: { limit, offset: Number(query.get('offset') ?? 0), total: items.length },
      }),
    };
    grow(items);
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof globalThis.fetch;
  return { fetch, requests, items };
}

/** A new item at the head of the list: what an offset would count again on the next page. */
const arrive = (items: Item[]) =>
  items.unshift({ id: `10000000-0000-4000-8000-${String(items.length).padStart(12, '0')}` });

describe('the client’s iterators page by cursor', () => {
  it('asks each next page starting after the last item, so arrivals are neither skipped nor repeated', async () => {
    const list = fakeList(7, arrive);
    const client = createPaymentsClient({ baseUrl: 'http://api.test', token: 'a token', fetch: list.fetch });
    const original = list.items.map((item) => item.id);
    const seen = (await client.transactions.list({ limit: 3 }).toArray()).map((item) => item.id);
    expect(seen).to.deep.equal(original);
    expect(list.requests.map((q) => q.get('starting_after'))).to.deep.equal([null, original[2], original[5]]);
    expect(list.requests.every((q) => !q.has('offset'))).to.equal(true);
  });

  it('follows cursors through the reconciliation queue, one list across withdrawals and cases', async () => {
    const list = fakeList(5, arrive);
    const client = createPaymentsClient({ baseUrl: 'http://api.test', token: 'a token', fetch: list.fetch });
    const original = list.items.map((item) => item.id);
    const seen = (await client.admin.reconciliation.list({ limit: 2 }).toArray()).map((item) => item.id);
    expect(seen).to.deep.equal(original);
    expect(list.requests.map((q) => q.get('starting_after'))).to.deep.equal([null, original[1], original[3]]);
    expect(list.requests.every((q) => !q.has('offset'))).to.equal(true);
  });

  it('starts at the offset or cursor given, then follows cursors alone', async () => {
    const list = fakeList(6, () => undefined);
    const client = createPaymentsClient({ baseUrl: 'http://api.test', token: 'a token', fetch: list.fetch });
    const ids = list.items.map((item) => item.id);
    const seen = await client.webhookEndpoints.deliveries
      .list('00000000-0000-4000-8000-0000000000aa', { limit: 2, offset: 1 })
      .toArray();
    expect(seen.map((item) => item.id)).to.deep.equal(ids.slice(1));
    expect(list.requests.map((q) => [q.get('offset'), q.get('starting_after')])).to.deep.equal([
      ['1', null],
      [null, ids[2]],
      [null, ids[4]],
    ]);
  });

  it('walks towards newer items from ending_before', async () => {
    const list = fakeList(6, () => undefined, false);
    const client = createPaymentsClient({ baseUrl: 'http://api.test', token: 'a token', fetch: list.fetch });
    const ids = list.items.map((item) => item.id);
    const pages: string[][] = [];
    for await (const page of client.events.list({ limit: 2, ending_before: ids[5] }).pages()) {
      pages.push(page.data.map((item) => item.id));
    }
    expect(pages).to.deep.equal([ids.slice(3, 5), ids.slice(1, 3), ids.slice(0, 1)]);
    expect(list.requests.map((q) => q.get('ending_before'))).to.deep.equal([ids[5], ids[3], ids[1]]);
  });

  it('sends the events’ created bounds as created[gte] and the like', async () => {
    const list = fakeList(1, () => undefined, false);
    const client = createPaymentsClient({ baseUrl: 'http://api.test', token: 'a token', fetch: list.fetch });
    await client.events.listPage({ type: 'transaction.completed', created: { gte: 100, lt: 200 } });
    const [query] = list.requests;
    expect(query?.get('created[gte]')).to.equal('100');
    expect(query?.get('created[lt]')).to.equal('200');
    expect(query?.get('type')).to.equal('transaction.completed');
  });
});
