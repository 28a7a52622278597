import { createServer } from 'node:http';

/**
 * Stands in for the ledger's and identity's internal APIs: renders transactions, accounts and users as the
 * public API would (by X-API-Version), and serves an empty list of revocations in force.
 */
export interface OwnerStub {
  url: string;
  /** Paths asked for, with the version asked at. */
  requests: { path: string; version: string | undefined; authorization: string | undefined }[];
  /**
   * Answers the next `count` object requests with 503, as an owner that is down; with `version`, only those at that
   * API version (a delivery's, not the events API's render of the same event).
   */
  failNext(count: number, version?: string): void;
  close(): Promise<void>;
}

export async function startOwnerStub(): Promise<OwnerStub> {
  const requests: OwnerStub['requests'] = [];
  let failing = 0;
  let failingVersion: string | undefined;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const version = req.headers['x-api-version'] as string | undefined;
    requests.push({ path, version, authorization: req.headers.authorization });
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/internal/revocations') return json(200, { data: [] });
    // A transaction is asked for with the user its payload goes to (`?for_user=`).
    const match = /^\/internal\/(transactions|accounts|users)\/([0-9a-f-]{36})(\?for_user=[^&]+)?$/.exec(
      path,
    );
    if (!match) return json(404, { code: 'RESOURCE_NOT_FOUND' });
    if (failing > 0 && (failingVersion === undefined || failingVersion === version)) {
      failing -= 1;
      return json(503, { code: 'SERVICE_UNAVAILABLE' });
    }
    const [, kind, id] = match;
    const now = new Date().toISOString();
    if (kind === 'transactions') {
      return json(200, {
        id,
        account_id: '00000000-0000-4000-8000-000000000001',
        type: 'deposit',
        status: 'completed',
        amount: 12.34,
        currency: 'USD',
        counterparty_account_id: null,
        payment_id: id,
        failure_reason: null,
        created_at: now,
        updated_at: now,
        completed_at: now,
        ...(version === '1.1' ? { fee: 0 } : {}),
      });
    }
    if (kind === 'accounts') {
      return json(200, {
        id,
        user_id: '00000000-0000-4000-8000-000000000002',
        currency: 'USD',
        balance: 0,
        available_balance: 0,
        metadata: {},
        created_at: now,
        updated_at: now,
      });
    }
    return json(200, {
      id,
      username: 'someone',
      email: 'someone@example.com',
      role: 'user',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext: (count, onlyAt) => {
      failing = count;
      failingVersion = onlyAt;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
