import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

interface Account {
  id: string;
  user_id: string;
  currency: string;
  minor: bigint;
  metadata: Record<string, unknown>;
}

interface Transaction {
  id: string;
  account_id: string;
  type: string;
  status: string;
  minor: bigint;
  currency: string;
  failure_reason: string | null;
  polls: number;
}

export interface FakeGateway {
  url: string;
  requests: SeenRequest[];
  /** Tokens the fake stops accepting, as if revoked. */
  revoke(token: string): void;
  close(): Promise<void>;
}

const EXPONENTS: Record<string, number> = { USD: 2, EUR: 2, JPY: 0, KWD: 3 };
/** Amounts with special outcomes, so tests can steer a deposit. */
export const DECLINED_AMOUNT = 13;
export const STUCK_AMOUNT = 666;

const toMinor = (amount: number, exponent: number) => BigInt(Math.round(amount * 10 ** exponent));
const toNumber = (minor: bigint, exponent: number) => Number(minor) / 10 ** exponent;

function problem(res: ServerResponse, status: number, code: string, detail: string, errors?: unknown[]) {
  res
    .writeHead(status, { 'content-type': 'application/problem+json' })
    .end(
      JSON.stringify({ type: `/problems/${code}`, title: code, status, detail, instance: '/', code, errors }),
    );
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function fakeToken(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part({ sub, jti: randomUUID() })}.sig`;
}

/**
 * Just enough of the payments API for the CLI: users and login, accounts, deposits that settle after a few
 * polls (or fail, or never settle), withdrawals, balances, transactions and the currency catalogue.
 */
export async function startFakeGateway(): Promise<FakeGateway> {
  const requests: SeenRequest[] = [];
  const users = new Map<string, { id: string; username: string; email: string; password: string }>();
  const tokens = new Map<string, string>();
  const accounts = new Map<string, Account>();
  const transactions = new Map<string, Transaction>();
  const idempotency = new Map<string, string>();

  const accountBody = (a: Account) => ({
    id: a.id,
    user_id: a.user_id,
    currency: a.currency,
    balance: toNumber(a.minor, EXPONENTS[a.currency] ?? 2),
    available_balance: toNumber(a.minor, EXPONENTS[a.currency] ?? 2),
    metadata: a.metadata,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
  });
  const transactionBody = (t: Transaction) => ({
    id: t.id,
    account_id: t.account_id,
    type: t.type,
    status: t.status,
    amount: toNumber(t.minor, EXPONENTS[t.currency] ?? 2),
    currency: t.currency,
    failure_reason: t.failure_reason,
    created_at: '2025-01-01T00:00:00.000Z',
  });

  const settle = (t: Transaction) => {
    t.polls += 1;
    if (t.status !== 'pending' || t.polls < 2) return;
    const amount = toNumber(t.minor, EXPONENTS[t.currency] ?? 2);
    if (amount === STUCK_AMOUNT) return;
    if (amount === DECLINED_AMOUNT) {
      t.status = 'failed';
      t.failure_reason = 'the card was declined';
      return;
    }
    const account = accounts.get(t.account_id) as Account;
    account.minor += t.type === 'deposit' ? t.minor : -t.minor;
    t.status = 'completed';
  };

  /** The account's completed transactions as a journal, two entries a page whatever the limit, JSON or CSV. */
  const statement = (res: ServerResponse, url: URL, account: Account) => {
    const exponent = EXPONENTS[account.currency] ?? 2;
    let balance = 0n;
    const lines = [...transactions.values()]
      .filter((t) => t.account_id === account.id && t.status === 'completed')
      .map((t, i) => {
        const amount = t.type === 'deposit' ? t.minor : -t.minor;
        balance += amount;
        return { id: String(i + 1), t, amount, balance };
      });
    const after = Number(url.searchParams.get('starting_after') ?? 0);
    const page = lines.filter((line) => Number(line.id) > after).slice(0, 2);
    const hasMore = lines.length > 0 && page.at(-1) !== lines.at(-1);
    const from = url.searchParams.get('from') ?? '2025-01-01T00:00:00Z';
    const to = url.searchParams.get('to') ?? '2025-02-01T00:00:00Z';
    const money = (minor: bigint) => toNumber(minor, exponent).toFixed(exponent);
    if (url.searchParams.get('format') === 'csv') {
      const rows = [
        'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency',
      ];
      if (after === 0) rows.push(`${from},,,opening_balance,,,${money(0n)},${account.currency}`);
      for (const line of page) {
        rows.push(
          `2025-01-01T00:00:00.000Z,${line.id},${line.t.id},${line.t.type},,${money(line.amount)},${money(line.balance)},${account.currency}`,
        );
      }
      if (!hasMore) rows.push(`${to},,,closing_balance,,,${money(balance)},${account.currency}`);
      const next = new URLSearchParams(url.searchParams);
      next.set('starting_after', page.at(-1)?.id ?? '0');
      res.writeHead(200, {
        'content-type': 'text/csv; charset=utf-8',
        ...(hasMore ? { link: `<?${next.toString()}>; rel="next"` } : {}),
      });
      return res.end(rows.map((row) => `${row}\r\n`).join(''));
    }
    return json(res, 200, {
      account_id: account.id,
      currency: account.currency,
      from,
      to,
      opening_balance: 0,
      closing_balance: toNumber(balance, exponent),
      entries: page.map((line) => ({
        id: line.id,
        transaction_id: line.t.id,
        type: line.t.type,
        counterparty_account_id: null,
        amount: toNumber(line.amount, exponent),
        balance: toNumber(line.balance, exponent),
        created_at: '2025-01-01T00:00:00.000Z',
      })),
      has_more: hasMore,
    });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      requests.push({
        method: req.method ?? '',
        path: url.pathname + url.search,
        headers: req.headers,
        body,
      });
      const route = `${req.method} ${url.pathname}`;
      const segments = url.pathname.split('/').filter(Boolean);
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const userId = bearer ? tokens.get(bearer) : undefined;

      if (route === 'POST /user') {
        const { username, email, password } = body as Record<string, string>;
        if (typeof email !== 'string' || !email.includes('@')) {
          return problem(res, 400, 'VALIDATION_ERROR', 'The request is not valid', [
            { field: 'email', message: 'must match format "email"' },
          ]);
        }
        if ([...users.values()].some((u) => u.username === username)) {
          return problem(res, 409, 'DUPLICATE_ENTRY', 'A user with this username already exists');
        }
        const user = { id: randomUUID(), username: username as string, email, password: password as string };
        users.set(user.id, user);
        return json(
          res,
          201,
          { id: user.id, username, email, role: 'user', status: 'active' },
          {
            location: `/user/${user.id}`,
          },
        );
      }
      if (route === 'POST /auth/login') {
        const who = (body.username ?? body.email ?? body.identity) as string;
        const user = [...users.values()].find((u) => u.username === who || u.email === who);
        if (!user || user.password !== body.password) {
          return problem(res, 401, 'INVALID_CREDENTIALS', 'Invalid username or password');
        }
        const token = fakeToken(user.id);
        tokens.set(token, user.id);
        // Users named short-* get tokens about to expire, to exercise the CLI's refresh.
        return json(res, 200, {
          token,
          token_type: 'Bearer',
          expires_in: user.username.startsWith('short') ? 60 : 900,
        });
      }
      if (req.method === 'PUT' && segments[0] === 'user' && segments[1]) {
        const user = users.get(segments[1]);
        if (!userId || !user || userId !== user.id) return problem(res, 403, 'ACCESS_DENIED', 'Not yours');
        const changes = body as Record<string, string>;
        if ((changes.email || changes.password) && changes.current_password !== user.password) {
          return problem(res, 403, 'ACCESS_DENIED', 'The current password is not correct');
        }
        if (changes.username) user.username = changes.username;
        if (changes.email) user.email = changes.email;
        if (changes.password) user.password = changes.password;
        return json(res, 200, { id: user.id, username: user.username, email: user.email });
      }
      if (route === 'POST /auth/refresh') {
        if (!userId) return problem(res, 401, 'AUTH_REQUIRED', 'A valid bearer token is required');
        const token = fakeToken(userId);
        tokens.set(token, userId);
        return json(res, 200, { token, token_type: 'Bearer', expires_in: 900 });
      }
      if (segments[0] === 'api' && segments[1] === 'currencies' && segments[2]) {
        const code = segments[2];
        const exponent = EXPONENTS[code];
        if (exponent === undefined)
          return problem(res, 404, 'RESOURCE_NOT_FOUND', `Currency ${code} not found`);
        return json(res, 200, { code, name: code, minor_units: exponent, supported: true });
      }
      if (route === 'GET /api/currencies') {
        return json(res, 200, {
          data: Object.entries(EXPONENTS).map(([code, minor_units]) => ({
            code,
            name: code,
            minor_units,
            supported: true,
          })),
        });
      }

      if (!userId) return problem(res, 401, 'AUTH_REQUIRED', 'A valid bearer token is required');

      if (route === 'POST /auth/logout') {
        tokens.delete(bearer as string);
        return res.writeHead(204).end();
      }
      if (segments[0] === 'user' && req.method === 'GET') {
        const user = users.get(segments[1] ?? '');
        if (!user) return problem(res, 404, 'RESOURCE_NOT_FOUND', 'User not found');
        return json(res, 200, { id: user.id, username: user.username, email: user.email, role: 'user' });
      }
      if (route === 'POST /account') {
        const currency = body.currency as string;
        if (!(currency in EXPONENTS)) {
          return problem(
            res,
            422,
            'INVALID_CURRENCY',
            `Unsupported currency ${currency}; supported: USD, EUR, JPY, KWD`,
          );
        }
        const account = {
          id: randomUUID(),
          user_id: userId,
          currency,
          minor: 0n,
          metadata: (body.metadata ?? {}) as Record<string, unknown>,
        };
        accounts.set(account.id, account);
        return json(res, 201, accountBody(account), { location: `/account/${account.id}` });
      }
      if (route === 'GET /accounts') {
        const mine = [...accounts.values()].filter((a) => a.user_id === userId);
        return json(res, 200, {
          data: mine.map(accountBody),
          pagination: { limit: 20, offset: 0, total: mine.length },
        });
      }
      if (route === 'GET /transactions') {
        const mine = [...transactions.values()].filter((t) => accounts.get(t.account_id)?.user_id === userId);
        return json(res, 200, {
          data: mine.map(transactionBody),
          pagination: { limit: 20, offset: 0, total: mine.length },
        });
      }
      if (segments[0] === 'account' && segments[1]) {
        if (segments[1] === 'explode')
          return problem(res, 500, 'INTERNAL_ERROR', 'An unexpected error occurred');
        const account = accounts.get(segments[1]);
        if (!account) return problem(res, 404, 'RESOURCE_NOT_FOUND', 'Account not found');
        const exponent = EXPONENTS[account.currency] ?? 2;
        if (req.method === 'GET' && segments.length === 2) return json(res, 200, accountBody(account));
        if (req.method === 'GET' && segments[2] === 'statement') {
          return statement(res, url, account);
        }
        if (req.method === 'GET' && segments[2] === 'balance' && url.searchParams.has('at')) {
          const at = new Date(url.searchParams.get('at') as string);
          return json(res, 200, {
            account_id: account.id,
            balance: toNumber(account.minor, exponent),
            currency: account.currency,
            at: at.toISOString(),
          });
        }
        if (req.method === 'GET' && segments[2] === 'balance') {
          return json(res, 200, {
            account_id: account.id,
            balance: toNumber(account.minor, exponent),
            currency: account.currency,
            available_balance: toNumber(account.minor, exponent),
          });
        }
        if (req.method === 'POST' && (segments[2] === 'deposit' || segments[2] === 'withdraw')) {
          const key = req.headers['idempotency-key'] as string | undefined;
          const replay = key ? transactions.get(idempotency.get(key) ?? '') : undefined;
          if (replay) {
            return json(res, 202, transactionBody(replay), { location: `/transaction/${replay.id}` });
          }
          if (body.currency !== account.currency) {
            return problem(res, 422, 'INVALID_CURRENCY', `The account is in ${account.currency}`);
          }
          const minor = toMinor(body.amount as number, exponent);
          if (segments[2] === 'withdraw' && minor > account.minor) {
            return problem(res, 422, 'INSUFFICIENT_FUNDS', 'Not enough balance for this withdrawal');
          }
          const transaction: Transaction = {
            id: randomUUID(),
            account_id: account.id,
            type: segments[2] === 'deposit' ? 'deposit' : 'withdrawal',
            status: 'pending',
            minor,
            currency: account.currency,
            failure_reason: null,
            polls: 0,
          };
          transactions.set(transaction.id, transaction);
          if (key) idempotency.set(key, transaction.id);
          return json(res, 202, transactionBody(transaction), { location: `/transaction/${transaction.id}` });
        }
      }
      if (segments[0] === 'transaction' && segments[1] && req.method === 'GET') {
        const transaction = transactions.get(segments[1]);
        if (!transaction) return problem(res, 404, 'RESOURCE_NOT_FOUND', 'Transaction not found');
        settle(transaction);
        return json(res, 200, transactionBody(transaction));
      }
      return problem(res, 404, 'RESOURCE_NOT_FOUND', `No route for ${route}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    revoke: (token) => void tokens.delete(token),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
