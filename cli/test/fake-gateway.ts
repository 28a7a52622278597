import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { RECONCILIATION_DECISIONS, type ReconciliationDecision } from '@payments/contracts';

export interface SeenRequest {
  method: string;
  /** The path below the version prefix, with the query. */
  path: string;
  /** The API version the path's prefix named (`/v1.1/…` → `1.1`), as the gateway reads it; null without one. */
  version: string | null;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** The versions the fake serves, as the gateway does; another prefix is a 400. */
const API_VERSIONS = ['1.0', '1.1'];

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
  /** Makes a registered user an admin, as an operator would. */
  grantAdmin(username: string): void;
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

/** The mismatch cases the fake's ledger starts with, named by what deciding them does. */
export const RECONCILIATION_CASES = {
  /** captured_not_credited, with a transaction: `book` resolves it. */
  bookable: '5d1e0c3a-0000-4000-8000-000000000001',
  /** amount_differs: the provider's records do not explain it, so `book` is refused (409). */
  unexplained: '5d1e0c3a-0000-4000-8000-000000000002',
  /** unknown_to_ledger, no transaction: nothing to book against (422). */
  unknown: '5d1e0c3a-0000-4000-8000-000000000003',
} as const;
export const UNCONFIRMED_WITHDRAWAL = '7b2f9d10-0000-4000-8000-000000000001';
export const OVERDRAWN_ACCOUNT = '9c3a0e21-0000-4000-8000-000000000001';
export const PLATFORM_LOSS = '4a5b6c7d-0000-4000-8000-000000000001';
export const REMOVED_DEPOSIT = '4a5b6c7d-0000-4000-8000-000000000002';

interface MismatchCase {
  kind: string;
  id: string;
  status: 'open' | 'cleared' | 'resolved';
  provider_reference: string;
  transaction_id: string | null;
  currency: string;
  provider_amount: number;
  ledger_amount: number;
  found_at: string;
  last_seen_at: string;
  decision?: string;
  reason?: string;
  resolved_by?: string;
  resolved_at?: string;
}

const FOUND_AT = '2025-01-02T03:04:05.000Z';

function pageOf<T>(url: URL, items: T[]) {
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const offset = Number(url.searchParams.get('offset') ?? 0);
  return { data: items.slice(offset, offset + limit), pagination: { limit, offset, total: items.length } };
}

/**
 * The ledger's admin routes as the gateway forwards them: the reconciliation list (JSON or CSV), its cases and
 * their decisions, a run, the trail of admin actions and the overdrawn accounts; only for an admin's token.
 */
function createLedgerAdmin() {
  const withdrawal = {
    kind: 'unconfirmed_withdrawal',
    id: UNCONFIRMED_WITHDRAWAL,
    account_id: '9c3a0e21-0000-4000-8000-000000000002',
    type: 'withdrawal',
    status: 'pending',
    amount: 40,
    currency: 'USD',
    counterparty_account_id: null,
    payment_id: 'tr_unconfirmed',
    failure_reason: null,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
    completed_at: null,
    user_id: '1e2d3c4b-0000-4000-8000-000000000001',
    reconciliation_required_at: '2025-01-01T12:00:00.000Z',
  };
  const openCase = (
    id: string,
    kind: string,
    reference: string,
    transactionId: string | null,
    currency: string,
    provider: number,
    ledger: number,
  ): MismatchCase => ({
    kind,
    id,
    status: 'open',
    provider_reference: reference,
    transaction_id: transactionId,
    currency,
    provider_amount: provider,
    ledger_amount: ledger,
    found_at: FOUND_AT,
    last_seen_at: FOUND_AT,
  });
  const cases = [
    openCase(
      RECONCILIATION_CASES.bookable,
      'captured_not_credited',
      'pi_captured',
      '0a1b2c3d-0000-4000-8000-000000000001',
      'USD',
      25.5,
      0,
    ),
    openCase(
      RECONCILIATION_CASES.unexplained,
      'amount_differs',
      'pi_differs',
      '0a1b2c3d-0000-4000-8000-000000000002',
      'KWD',
      1.234,
      1.2,
    ),
    openCase(RECONCILIATION_CASES.unknown, 'unknown_to_ledger', 'pi_stranger', null, 'EUR', 7, 0),
  ];
  const actions: Record<string, unknown>[] = [];
  const overdrawn = {
    id: OVERDRAWN_ACCOUNT,
    user_id: '1e2d3c4b-0000-4000-8000-000000000002',
    currency: 'KWD',
    balance: -1.5,
    available_balance: -1.5,
    metadata: {},
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
    overdrawn_by: 1.5,
  };
  /** What the ledger reports with every page of overdrawn accounts. */
  const exposure = {
    by_currency: [
      { currency: 'KWD', overdrawn_accounts: 1, overdrawn_total: 1.5, losses: 0, losses_total: 0 },
      { currency: 'USD', overdrawn_accounts: 0, overdrawn_total: 0, losses: 1, losses_total: 9.9 },
    ],
    platform_losses: [
      {
        id: PLATFORM_LOSS,
        deposit_id: REMOVED_DEPOSIT,
        reason: 'refund',
        currency: 'USD',
        amount: 10,
        fee: 0.1,
        loss: 9.9,
        provider_reference: 're_1',
        booked_at: FOUND_AT,
      },
    ],
  };

  const csvReport = () => {
    const rows = [
      'kind,case_id,status,transaction_id,provider_reference,currency,provider_amount,ledger_amount,found_at',
      `unconfirmed_withdrawal,,open,${withdrawal.id},${withdrawal.payment_id},USD,,40.00,${withdrawal.reconciliation_required_at}`,
      ...cases
        .filter((c) => c.status === 'open')
        .map((c) =>
          [
            c.kind,
            c.id,
            c.status,
            c.transaction_id ?? '',
            c.provider_reference,
            c.currency,
            c.provider_amount,
            c.ledger_amount,
            c.found_at,
          ].join(','),
        ),
    ];
    return rows.map((row) => `${row}\r\n`).join('');
  };

  /** Mirrors the ledger's resolve: an earlier decision stands, `book` needs a transaction and an explanation. */
  const resolve = (
    res: ServerResponse,
    found: MismatchCase,
    body: Record<string, unknown>,
    actor: string,
  ) => {
    const { decision, reason } = body;
    if (
      !RECONCILIATION_DECISIONS.includes(decision as ReconciliationDecision) ||
      typeof reason !== 'string' ||
      reason.length < 3 ||
      Object.keys(body).length !== 2
    ) {
      return problem(res, 400, 'VALIDATION_ERROR', 'The request is not valid', [
        { field: 'reason', message: 'must NOT have fewer than 3 characters' },
      ]);
    }
    if (found.status === 'resolved') {
      if (found.decision === decision) return json(res, 200, found);
      return problem(res, 409, 'CONFLICT', `This case was already decided: ${found.decision}`);
    }
    if (decision === 'book' && (found.transaction_id === null || found.kind === 'unknown_to_ledger')) {
      return problem(
        res,
        422,
        'BUSINESS_RULE_VIOLATION',
        'Nothing of the ledger to book this against: give it back (refund, reverse) or decide nothing_owed with a reason',
      );
    }
    if (decision === 'book' && found.kind === 'amount_differs') {
      return problem(
        res,
        409,
        'CONFLICT',
        `The provider's records do not explain this difference (${found.kind}); decide nothing_owed with a reason once it is understood`,
      );
    }
    Object.assign(found, {
      status: 'resolved',
      decision,
      reason,
      resolved_by: actor,
      resolved_at: '2025-01-03T00:00:00.000Z',
    });
    actions.push({
      id: randomUUID(),
      actor,
      action: `reconciliation.${decision}`,
      subject: `reconciliation_case:${found.id}`,
      // The ledger names the user of the case's transaction; these cases' transactions are nobody's it knows.
      owner: null,
      reason,
      detail: { kind: found.kind, provider_reference: found.provider_reference },
      created_at: '2025-01-03T00:00:00.000Z',
    });
    return json(res, 200, found);
  };

  return (
    res: ServerResponse,
    method: string,
    url: URL,
    body: Record<string, unknown>,
    user: { id: string; role: string },
  ) => {
    const route = `${method} ${url.pathname}`;
    if (user.role !== 'admin') {
      return problem(res, 403, 'ACCESS_DENIED', 'Only an administrator may use the admin routes');
    }
    if (route === 'GET /admin/reconciliation') {
      if (url.searchParams.get('format') === 'csv') {
        return res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(csvReport());
      }
      return json(res, 200, pageOf(url, [withdrawal, ...cases.filter((c) => c.status === 'open')]));
    }
    if (route === 'POST /admin/reconciliation/runs') {
      return json(res, 200, {
        since: '2025-01-01T00:00:00.000Z',
        cursor: '2025-01-02T00:00:00.000Z',
        checked: 12,
        agreed: 8,
        unsettled: 1,
        mismatches: 3,
        opened: 2,
        cleared: 1,
      });
    }
    const match = /^\/admin\/reconciliation\/cases\/([^/]+)(\/resolution)?$/.exec(url.pathname);
    const found = match ? cases.find((c) => c.id === match[1]) : undefined;
    if (match && !found) return problem(res, 404, 'RESOURCE_NOT_FOUND', 'Reconciliation case not found');
    if (found && method === 'GET' && !match?.[2]) return json(res, 200, found);
    if (found && method === 'POST' && match?.[2]) return resolve(res, found, body, user.id);
    if (route === 'GET /admin/actions') {
      const [actor, owner] = ['actor', 'owner'].map((name) => url.searchParams.get(name));
      const narrowed = actions.filter(
        (a) => (actor === null || a.actor === actor) && (owner === null || a.owner === owner),
      );
      return json(res, 200, pageOf(url, narrowed));
    }
    if (route === 'GET /admin/overdrawn-accounts')
      return json(res, 200, { ...pageOf(url, [overdrawn]), ...exposure });
    return problem(res, 404, 'RESOURCE_NOT_FOUND', `No route for ${route}`);
  };
}

interface FakeUser {
  id: string;
  username: string;
  email: string;
  password: string;
  role: 'user' | 'admin';
  status: 'active' | 'disabled' | 'locked';
}

const USER_STATUSES = ['active', 'disabled', 'locked'];

/** Identity's admin routes: finding users and setting their status (which revokes their tokens), admins only. */
function createUsersAdmin(users: Map<string, FakeUser>, revokeTokensOf: (id: string) => void) {
  const view = (u: FakeUser) => ({
    id: u.id,
    username: u.username,
    email: u.email,
    role: u.role,
    status: u.status,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
  });
  return (res: ServerResponse, method: string, url: URL, body: Record<string, unknown>, actor: FakeUser) => {
    if (actor.role !== 'admin') {
      return problem(res, 403, 'ACCESS_DENIED', 'Only an administrator may manage users');
    }
    if (method === 'GET' && url.pathname === '/admin/users') {
      const given = (name: string) => url.searchParams.get(name) ?? undefined;
      const [username, email, q, status] = ['username', 'email', 'q', 'status'].map(given);
      if (status !== undefined && !USER_STATUSES.includes(status)) {
        return problem(res, 400, 'VALIDATION_ERROR', 'Invalid query parameters', [
          { field: 'status', message: 'must be equal to one of the allowed values' },
        ]);
      }
      const found = [...users.values()]
        .filter(
          (u) =>
            (username === undefined || u.username.toLowerCase() === username.toLowerCase()) &&
            (email === undefined || u.email === email.toLowerCase()) &&
            (q === undefined ||
              u.username.toLowerCase().startsWith(q.toLowerCase()) ||
              u.email.startsWith(q.toLowerCase())) &&
            (status === undefined || u.status === status),
        )
        .sort((a, b) => a.username.toLowerCase().localeCompare(b.username.toLowerCase()))
        .map(view);
      return json(res, 200, pageOf(url, found));
    }
    const match = /^\/admin\/users\/([^/]+)\/status$/.exec(url.pathname);
    if (method === 'PATCH' && match) {
      const user = users.get(match[1] as string);
      if (!user) return problem(res, 404, 'RESOURCE_NOT_FOUND', 'User not found');
      if (!USER_STATUSES.includes(body.status as string)) {
        return problem(res, 400, 'VALIDATION_ERROR', 'The request is not valid', [
          { field: 'status', message: 'must be equal to one of the allowed values' },
        ]);
      }
      if (user.id === actor.id) {
        return problem(
          res,
          422,
          'BUSINESS_RULE_VIOLATION',
          'An administrator cannot change their own status',
        );
      }
      user.status = body.status as FakeUser['status'];
      if (user.status !== 'active') revokeTokensOf(user.id);
      return json(res, 200, view(user));
    }
    return problem(res, 404, 'RESOURCE_NOT_FOUND', `No route for ${method} ${url.pathname}`);
  };
}

/** The endpoint whose delivery log the fake holds: another user's, so only an admin may read it. */
export const WATCHED_ENDPOINT = '653b6d43-0000-4000-8000-000000000001';

function createDeliveryLog() {
  const delivery = (n: number, status: string, code: number | null, error: string | null) => ({
    id: `7e1d0c3a-0000-4000-8000-00000000000${n}`,
    endpoint_id: WATCHED_ENDPOINT,
    event_id: `6b324bd0-0000-4000-8000-00000000000${n}`,
    event_type: 'transaction.completed',
    status,
    attempts: n,
    last_status_code: code,
    last_latency_ms: code === null ? null : 42,
    last_error: error,
    next_attempt_at: status === 'pending' ? '2025-01-02T00:00:30.000Z' : null,
    created_at: '2025-01-02T00:00:00.000Z',
    updated_at: '2025-01-02T00:00:00.000Z',
  });
  const log = [
    delivery(1, 'succeeded', 200, null),
    delivery(2, 'pending', null, 'connection refused'),
    delivery(3, 'failed', 500, null),
  ];
  return (res: ServerResponse, url: URL, endpointId: string, viewer: FakeUser) => {
    if (endpointId !== WATCHED_ENDPOINT)
      return problem(res, 404, 'RESOURCE_NOT_FOUND', 'Webhook endpoint not found');
    if (viewer.role !== 'admin') {
      return problem(res, 403, 'ACCESS_DENIED', 'This webhook endpoint belongs to another user');
    }
    const status = url.searchParams.get('status');
    return json(
      res,
      200,
      pageOf(
        url,
        log.filter((d) => status === null || d.status === status),
      ),
    );
  };
}

/** A stranded confirmation and a poison message in the ledger's dead letters; currency's are empty. */
export const DEAD_LETTER_EVENT = {
  id: '2f0d1c3b-0000-4000-8000-000000000001',
  type: 'PaymentProcessed',
  version: 1,
  occurred_at: '2025-01-02T03:04:05.000Z',
  correlation_id: 'stranded-1',
  data: { transaction_id: '0a1b2c3d-0000-4000-8000-000000000009', status: 'completed' },
};
export const DEAD_LETTER_POISON = '{"id": "not-an-event", "type": "PaymentProcessed", ';

function createDeadLetters() {
  const queues: Record<string, ({ event: unknown } | { raw: string })[]> = {
    ledger: [{ event: DEAD_LETTER_EVENT }, { raw: DEAD_LETTER_POISON }],
    currency: [],
    'webhook-delivery': [],
  };
  return (res: ServerResponse, method: string, url: URL, body: Record<string, unknown>, actor: FakeUser) => {
    if (actor.role !== 'admin') {
      return problem(res, 403, 'ACCESS_DENIED', 'Only an administrator may read or replay dead letters');
    }
    const match = /^\/admin\/dead-letters\/([^/]+)(\/replay)?$/.exec(url.pathname);
    const letters = match ? queues[match[1] as string] : undefined;
    if (!match || !letters)
      return problem(res, 404, 'RESOURCE_NOT_FOUND', `No route for ${method} ${url.pathname}`);
    const queue = match[1];
    if (method === 'GET' && !match[2]) {
      const limit = Number(url.searchParams.get('limit') ?? 100);
      return json(res, 200, { queue, count: letters.length, data: letters.slice(0, limit) });
    }
    if (method === 'POST' && match[2]) {
      const limit = body.limit === undefined ? letters.length : Number(body.limit);
      if (!Number.isInteger(limit) || limit < 1) {
        return problem(res, 400, 'VALIDATION_ERROR', 'The request is not valid', [
          { field: 'limit', message: 'must be >= 1' },
        ]);
      }
      // The fake's consumer takes the confirmation for good; the poison would come back, as on the broker.
      const replayed = letters.splice(0, limit);
      letters.push(...replayed.filter((letter) => 'raw' in letter));
      return json(res, 200, { queue, replayed: replayed.length });
    }
    return problem(res, 404, 'RESOURCE_NOT_FOUND', `No route for ${method} ${url.pathname}`);
  };
}

/**
 * Just enough of the payments API for the CLI: users and login, accounts, deposits that settle after a few
 * polls (or fail, or never settle), withdrawals, balances, transactions, the currency catalogue, and the admin
 * routes: identity's users, the ledger's, dead letters and another user's webhook delivery log.
 */
export async function startFakeGateway(): Promise<FakeGateway> {
  const requests: SeenRequest[] = [];
  const users = new Map<string, FakeUser>();
  const tokens = new Map<string, string>();
  const accounts = new Map<string, Account>();
  const transactions = new Map<string, Transaction>();
  const idempotency = new Map<string, string>();
  const ledgerAdmin = createLedgerAdmin();
  const deadLetters = createDeadLetters();
  const deliveryLog = createDeliveryLog();
  const revokeTokensOf = (id: string) => {
    for (const [token, owner] of tokens) if (owner === id) tokens.delete(token);
  };
  const usersAdmin = createUsersAdmin(users, revokeTokensOf);

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
      const version = /^\/v(\d+(?:\.\d+)*)(?=\/|$)/.exec(url.pathname)?.[1] ?? null;
      if (version !== null) url.pathname = url.pathname.slice(`/v${version}`.length) || '/';
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      requests.push({
        method: req.method ?? '',
        path: url.pathname + url.search,
        version,
        headers: req.headers,
        body,
      });
      if (version !== null && !API_VERSIONS.includes(version)) {
        return problem(res, 400, 'VALIDATION_ERROR', `Unsupported API version ${version}`);
      }
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
        const user: FakeUser = {
          id: randomUUID(),
          username: username as string,
          email: email.toLowerCase(),
          password: password as string,
          role: 'user',
          status: 'active',
        };
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
        if (user.status !== 'active')
          return problem(res, 403, 'ACCESS_DENIED', `This account is ${user.status}`);
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
        return json(res, 200, { id: user.id, username: user.username, email: user.email, role: user.role });
      }
      if (segments[0] === 'admin' && segments[1] === 'users') {
        const user = users.get(userId) as FakeUser;
        return usersAdmin(res, req.method ?? '', url, body, user);
      }
      if (segments[0] === 'admin' && segments[1] === 'dead-letters') {
        const user = users.get(userId) as FakeUser;
        return deadLetters(res, req.method ?? '', url, body, user);
      }
      if (segments[0] === 'admin') {
        const user = users.get(userId);
        if (!user) return problem(res, 401, 'AUTH_REQUIRED', 'A valid bearer token is required');
        return ledgerAdmin(res, req.method ?? '', url, body, user);
      }
      if (segments[0] === 'webhook-endpoints' && segments[2] === 'deliveries' && req.method === 'GET') {
        return deliveryLog(res, url, segments[1] as string, users.get(userId) as FakeUser);
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
    grantAdmin(username) {
      const user = [...users.values()].find((u) => u.username === username);
      if (!user) throw new Error(`No user ${username} to make an admin`);
      user.role = 'admin';
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
