import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import express from 'express';
import { createEvent } from '@payments/contracts';
import { createLogger, DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { startLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

type Instance = 'lean' | 'express';

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  chunked?: boolean;
}

interface Answer {
  status: number;
  /** Header name and value pairs, in the order they were written; Date left out. */
  headers: [string, string][];
  body: string;
}

/** Marks each request, so the test knows which of them reached the Express app (never read by the ledger). */
const TAG = 'x-test-tag';
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const LIMIT = 102_400;

function send(base: string, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = {
      ...(sent.body && !sent.chunked ? { 'content-length': String(sent.body.length) } : {}),
      ...(sent.chunked ? { 'transfer-encoding': 'chunked' } : {}),
      ...sent.headers,
    };
    const request = httpRequest(
      `${base}${sent.path}`,
      { method: sent.method, headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const pairs: [string, string][] = [];
          for (let i = 0; i < response.rawHeaders.length; i += 2) {
            const name = response.rawHeaders[i] as string;
            if (name.toLowerCase() !== 'date') pairs.push([name, response.rawHeaders[i + 1] as string]);
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: pairs,
            body: Buffer.concat(chunks).toString(),
          });
        });
      },
    );
    request.on('error', reject);
    if (sent.body && sent.chunked) {
      request.write(sent.body.subarray(0, 5));
      request.end(sent.body.subarray(5));
    } else {
      request.end(sent.body);
    }
  });
}

const headerOf = (answer: Answer, name: string) =>
  answer.headers.find(([given]) => given.toLowerCase() === name)?.[1];

/** What differs by nature between two accepted requests: the transaction's id, its times, the request id. */
function comparable(answer: Answer) {
  const id = answer.status === 202 ? (JSON.parse(answer.body) as { id: string }).id : null;
  const neutral = (text: string) =>
    (id ? text.replaceAll(id, '<transaction id>') : text).replace(TIMESTAMP, '<time>');
  return {
    status: answer.status,
    headers: answer.headers.map(([name, value]) => [
      name,
      name.toLowerCase() === 'x-request-id' ? '<request id>' : neutral(value),
    ]),
    body: neutral(answer.body),
  };
}

interface Case {
  name: string;
  /** Whether the front handler serves it (else it is left to the Express app). */
  lean: boolean;
  status: number;
  request: (instance: Instance) => Sent;
  /** Both answers are for one transaction (a replay): compared byte for byte, ids and times included. */
  same?: boolean;
}

describe('ledger money requests served in front of Express', () => {
  let ledger: LedgerHarness;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let revoked: TestUser;
  const accounts = { usd: '', other: '', eur: '', bobs: '' };
  const replayKey = `replay-${randomUUID()}`;
  const throughExpress = new Set<string>();
  const logLines: Record<string, unknown>[] = [];
  const application = express.application as unknown as {
    handle: (req: IncomingMessage, ...rest: unknown[]) => unknown;
  };
  const handle = application.handle;
  let metricsBefore: Record<Instance, Map<string, number>>;

  const base = (instance: Instance) => (instance === 'lean' ? ledger.urls[0] : ledger.urls[1]) as string;

  /** The count of every `http_request_duration_seconds` series. */
  const requestCounts = async (instance: Instance) => {
    const response = await fetch(`${base(instance)}/metrics`, {
      headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN),
    });
    const counts = new Map<string, number>();
    for (const line of (await response.text()).split('\n')) {
      const match = /^http_request_duration_seconds_count(\{[^}]*\}) (\d+)$/.exec(line);
      if (match) counts.set(match[1] as string, Number(match[2]));
    }
    return counts;
  };

  before(async () => {
    // Each app copies `handle` from Express's application prototype when it is made: seen here, a request
    // reached the app; a request the front handler took never does.
    application.handle = function (this: unknown, req: IncomingMessage, ...rest: unknown[]) {
      throughExpress.add(String(req.headers[TAG]));
      return handle.call(this, req, ...rest);
    };
    const logger = createLogger('ledger-test', 'info', {
      write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>),
    });
    ledger = await startLedgerHarness({
      transport: 'amqp',
      instances: 2,
      expressOnly: [false, true],
      logger,
    });
    alice = ledger.newUser();
    bob = ledger.newUser();
    admin = ledger.newUser('admin');
    accounts.usd = (await ledger.openAccount(alice)).id;
    accounts.other = (await ledger.openAccount(alice)).id;
    accounts.eur = (await ledger.openAccount(alice, 'EUR')).id;
    accounts.bobs = (await ledger.openAccount(bob)).id;
    await ledger.fund(alice, accounts.usd, 1000);
    const first = await ledger.call('POST', `/account/${accounts.usd}/deposit`, {
      user: alice,
      body: { amount: 3, currency: 'USD' },
      headers: { 'idempotency-key': replayKey },
      base: ledger.urls[1],
    });
    expect(first.status).to.equal(202);
    // A token both ledgers verified (and remember) before it was revoked.
    const jti = randomUUID();
    revoked = { id: alice.id, token: ledger.issueToken({ sub: alice.id, jti }) };
    for (const url of ledger.urls) {
      expect((await ledger.call('GET', '/accounts', { user: revoked, base: url })).status).to.equal(200);
    }
    await ledger.bus.publish(
      createEvent(
        'TokenRevoked',
        { jti, expires_at: Math.floor(Date.now() / 1000) + 900 },
        { id: randomUUID(), correlationId: 'test' },
      ),
    );
    for (const url of ledger.urls) {
      const refused = await eventually(
        () => ledger.call('GET', '/accounts', { user: revoked, base: url }),
        (r) => r.status === 401,
      );
      expect(refused.status).to.equal(401);
    }
    metricsBefore = { lean: await requestCounts('lean'), express: await requestCounts('express') };
  });
  after(async () => {
    application.handle = handle;
    await ledger?.stop();
  });

  interface PostOptions {
    /** Whose token goes with it (alice's unless said). */
    as?: 'alice' | 'bob' | 'admin' | null;
    headers?: Record<string, string>;
    /** The Content-Type; null sends none. */
    type?: string | null;
  }
  /** A request, made when the case runs (the accounts and users exist by then). */
  const post =
    (
      path: () => string,
      body: string | Buffer | (() => string) | undefined,
      options: PostOptions | (() => PostOptions) = {},
    ) =>
    (): Sent => {
      const { as = 'alice', headers = {}, type } = typeof options === 'function' ? options() : options;
      const user = as ? { alice, bob, admin }[as] : null;
      const given = typeof body === 'function' ? body() : body;
      return {
        method: 'POST',
        path: path(),
        headers: {
          ...(type !== null ? { 'content-type': type ?? 'application/json' } : {}),
          ...(user ? { authorization: `Bearer ${user.token}` } : {}),
          ...headers,
        },
        body: typeof given === 'string' ? Buffer.from(given) : given,
      };
    };
  const json = (body: unknown) => JSON.stringify(body);
  const deposit = () => `/account/${accounts.usd}/deposit`;
  const withdraw = () => `/account/${accounts.usd}/withdraw`;
  const transfer = () => `/account/${accounts.usd}/transfer`;
  const usd = (amount: unknown) => json({ amount, currency: 'USD' });
  const bom = (text: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
  const transferTo =
    (to: () => string, amount = 1) =>
    () =>
      json({ to_account_id: to(), amount, currency: 'USD' });
  const missing = randomUUID();

  const cases: Case[] = [
    { name: 'a deposit', lean: true, status: 202, request: post(deposit, usd(12.34)) },
    { name: 'a deposit of a decimal string', lean: true, status: 202, request: post(deposit, usd('10.50')) },
    {
      name: 'a deposit asked in v1.1 (fee fields)',
      lean: true,
      status: 202,
      request: post(deposit, usd(5), { headers: { 'x-api-version': '1.1' } }),
    },
    {
      name: 'a deposit asked in "v1.1"',
      lean: true,
      status: 202,
      request: post(deposit, usd(5), { headers: { 'x-api-version': 'v1.1' } }),
    },
    {
      name: 'a deposit asked in a version the ledger does not know (its default)',
      lean: true,
      status: 202,
      request: post(deposit, usd(5), { headers: { 'x-api-version': '7.0' } }),
    },
    {
      name: 'a deposit in a lower-case currency, with extra spacing and key order',
      lean: true,
      status: 202,
      request: post(deposit, ' {"currency" : "usd",\n "amount": 7} '),
    },
    {
      name: 'a deposit with a byte order mark',
      lean: true,
      status: 202,
      request: post(deposit, bom(usd(4))),
    },
    {
      name: 'a deposit whose Content-Type is spelled in capitals',
      lean: true,
      status: 202,
      request: post(deposit, usd(4), { type: 'Application/JSON; Charset=UTF-8' }),
    },
    {
      name: 'a deposit padded to exactly the body limit',
      lean: true,
      status: 202,
      request: post(deposit, usd(4).padEnd(LIMIT, ' ')),
    },
    {
      name: 'a deposit to an account id in capitals',
      lean: true,
      status: 202,
      request: post(() => `/account/${accounts.usd.toUpperCase()}/deposit`, usd(2)),
    },
    { name: 'a withdrawal', lean: true, status: 202, request: post(withdraw, usd(5)) },
    {
      name: 'a transfer',
      lean: true,
      status: 202,
      request: post(
        transfer,
        transferTo(() => accounts.other, 5),
      ),
    },
    {
      name: 'a transfer to another currency, in v1.1',
      lean: true,
      status: 202,
      request: post(
        transfer,
        transferTo(() => accounts.eur, 5),
        { headers: { 'x-api-version': '1.1' } },
      ),
    },
    {
      name: "a transfer to another user's account",
      lean: true,
      status: 202,
      request: post(
        transfer,
        transferTo(() => accounts.bobs),
      ),
    },
    {
      name: 'a withdrawal beyond the available balance',
      lean: true,
      status: 422,
      request: post(withdraw, usd(100_000)),
    },
    {
      name: 'a transfer to the same account',
      lean: true,
      status: 422,
      request: post(
        transfer,
        transferTo(() => accounts.usd),
      ),
    },
    {
      name: 'a transfer to an account that does not exist',
      lean: true,
      status: 404,
      request: post(
        transfer,
        transferTo(() => missing),
      ),
    },
    {
      name: 'a transfer to a malformed account id',
      lean: true,
      status: 400,
      request: post(transfer, json({ to_account_id: 'nope', amount: 1, currency: 'USD' })),
    },
    {
      name: 'a deposit in a currency other than the account’s',
      lean: true,
      status: 422,
      request: post(deposit, json({ amount: 1, currency: 'EUR' })),
    },
    { name: 'an amount of zero', lean: true, status: 422, request: post(deposit, usd(0)) },
    { name: 'a negative amount', lean: true, status: 422, request: post(deposit, usd(-5)) },
    { name: 'more decimals than USD has', lean: true, status: 422, request: post(deposit, usd('1.234')) },
    { name: 'an absurd amount', lean: true, status: 422, request: post(deposit, usd(1e20)) },
    { name: 'an amount that is not a number', lean: true, status: 422, request: post(deposit, usd('abc')) },
    { name: 'an amount of the wrong type', lean: true, status: 400, request: post(deposit, usd(true)) },
    {
      name: 'a body without currency',
      lean: true,
      status: 400,
      request: post(deposit, json({ amount: 1 })),
    },
    { name: 'invalid JSON', lean: true, status: 400, request: post(deposit, '{"amount": 1,') },
    { name: 'a JSON string', lean: true, status: 400, request: post(deposit, '"deposit"') },
    { name: 'JSON null', lean: true, status: 400, request: post(deposit, 'null') },
    { name: 'a JSON array', lean: true, status: 400, request: post(deposit, '[1, 2]') },
    { name: 'a body of white space', lean: true, status: 400, request: post(deposit, ' \t\r\n ') },
    { name: 'a number after white space', lean: true, status: 400, request: post(deposit, '\r\n\t 5') },
    {
      name: 'a deposit after white space',
      lean: true,
      status: 202,
      request: post(deposit, `\r\n\t ${usd(3)}`),
    },
    { name: 'a byte order mark alone', lean: true, status: 400, request: post(deposit, bom('')) },
    {
      name: 'bytes that are not UTF-8',
      lean: true,
      status: 422,
      request: post(
        deposit,
        Buffer.concat([
          Buffer.from('{"amount":1,"currency":"U'),
          Buffer.from([0xff, 0xc3]),
          Buffer.from('"}'),
        ]),
      ),
    },
    { name: 'no token', lean: true, status: 401, request: post(deposit, usd(1), { as: null }) },
    {
      name: 'a token that is not one',
      lean: true,
      status: 401,
      request: post(deposit, usd(1), { as: null, headers: { authorization: 'Bearer not.a.token' } }),
    },
    {
      name: 'another authorization scheme',
      lean: true,
      status: 401,
      request: post(deposit, usd(1), { as: null, headers: { authorization: 'Basic YWxpY2U6cHc=' } }),
    },
    {
      name: 'an expired token',
      lean: true,
      status: 401,
      request: post(deposit, usd(1), () => ({
        as: null,
        headers: { authorization: `Bearer ${ledger.issueToken({ sub: alice.id, expiresIn: -60 })}` },
      })),
    },
    {
      name: 'a revoked token',
      lean: true,
      status: 401,
      request: post(deposit, usd(1), () => ({
        as: null,
        headers: { authorization: `Bearer ${revoked.token}` },
      })),
    },
    {
      name: "another user's account",
      lean: true,
      status: 403,
      request: post(deposit, usd(1), { as: 'bob' }),
    },
    {
      name: "an admin on another user's account",
      lean: true,
      status: 403,
      request: post(withdraw, usd(1), { as: 'admin' }),
    },
    {
      name: 'an account that does not exist',
      lean: true,
      status: 404,
      request: post(() => `/account/${missing}/withdraw`, usd(1)),
    },
    {
      name: 'an account id that is not a UUID',
      lean: true,
      status: 404,
      request: post(() => '/account/not-a-uuid/transfer', usd(1)),
    },
    {
      name: 'an error behind a path prefix (instance)',
      lean: true,
      status: 404,
      request: post(() => `/account/${missing}/deposit`, usd(1), {
        headers: { 'x-forwarded-prefix': '/v1.1' },
      }),
    },
    {
      name: 'a request id the ledger does not accept',
      lean: true,
      status: 202,
      request: post(deposit, usd(1), { headers: { 'x-request-id': 'has spaces in it' } }),
    },
    {
      name: 'a malformed Idempotency-Key',
      lean: true,
      status: 400,
      request: post(deposit, usd(1), { headers: { 'idempotency-key': 'has space' } }),
    },
    {
      name: 'a first request with an Idempotency-Key',
      lean: true,
      status: 202,
      request: (instance) =>
        post(deposit, usd(6), { headers: { 'idempotency-key': `first-${instance}-${replayKey}` } })(),
    },
    {
      name: 'a replay of an accepted request (same key, same body)',
      lean: true,
      status: 202,
      same: true,
      request: post(deposit, json({ currency: 'USD', amount: 3 }), {
        headers: { 'idempotency-key': replayKey },
      }),
    },
    {
      name: 'a key reused with another body',
      lean: true,
      status: 409,
      request: post(deposit, usd(4), { headers: { 'idempotency-key': replayKey } }),
    },
    {
      name: 'a key reused for another operation',
      lean: true,
      status: 409,
      request: post(withdraw, usd(3), { headers: { 'idempotency-key': replayKey } }),
    },
    // Left to the app.
    { name: 'a text body', lean: false, status: 415, request: post(deposit, usd(1), { type: 'text/plain' }) },
    {
      name: 'a body without Content-Type',
      lean: false,
      status: 415,
      request: post(deposit, usd(1), { type: null }),
    },
    {
      name: 'a JSON body in UTF-16',
      lean: false,
      status: 400,
      request: post(deposit, usd(1), { type: 'application/json; charset=utf-16' }),
    },
    {
      name: 'a JSON body in Latin-1',
      lean: false,
      status: 415,
      request: post(deposit, usd(1), { type: 'application/json; charset=latin1' }),
    },
    {
      name: 'a +json media type',
      lean: false,
      status: 202,
      request: post(deposit, usd(1), { type: 'application/vnd.payments+json' }),
    },
    {
      name: 'a gzipped body',
      lean: false,
      status: 202,
      request: post(deposit, gzipSync(usd(1)), { headers: { 'content-encoding': 'gzip' } }),
    },
    {
      name: 'a chunked body',
      lean: false,
      status: 202,
      request: () => ({ ...post(deposit, usd(1))(), chunked: true }),
    },
    { name: 'an empty body', lean: false, status: 400, request: post(deposit, '') },
    {
      name: 'a body one byte over the limit',
      lean: false,
      status: 413,
      request: post(deposit, usd(4).padEnd(LIMIT + 1, ' ')),
    },
    {
      name: 'a trailing slash',
      lean: false,
      status: 202,
      request: post(() => `${deposit()}/`, usd(1)),
    },
    {
      name: 'the path in capitals',
      lean: false,
      status: 202,
      request: post(() => `/ACCOUNT/${accounts.usd}/DEPOSIT`, usd(1)),
    },
    { name: 'a query string', lean: false, status: 202, request: post(() => `${deposit()}?x=1`, usd(1)) },
    {
      name: 'a percent-encoded account id',
      lean: false,
      status: 202,
      request: post(
        () => `/account/%${accounts.usd.charCodeAt(0).toString(16)}${accounts.usd.slice(1)}/deposit`,
        usd(1),
      ),
    },
    {
      name: 'GET',
      lean: false,
      status: 404,
      request: () => ({ ...post(deposit, undefined)(), method: 'GET' }),
    },
    {
      name: 'HEAD',
      lean: false,
      status: 404,
      request: () => ({ ...post(deposit, undefined)(), method: 'HEAD' }),
    },
    {
      name: 'PUT',
      lean: false,
      status: 404,
      request: () => ({ ...post(withdraw, usd(1))(), method: 'PUT' }),
    },
    {
      name: 'OPTIONS',
      lean: false,
      status: 404,
      request: () => ({ ...post(transfer, undefined)(), method: 'OPTIONS' }),
    },
  ];

  const accessLine = async (requestId: string) => {
    const line = await eventually(
      async () =>
        logLines.find(
          (entry) =>
            entry.request_id === requestId && /^request (completed|errored)$/.test(String(entry.msg)),
        ),
      Boolean,
    );
    expect(line, `the access line of ${requestId}`).to.not.equal(undefined);
    const { level, msg, req, res, route, user_id } = line as Record<string, unknown>;
    return { level, msg, req, res, route, user_id };
  };

  for (const [index, testCase] of cases.entries()) {
    it(`answers ${testCase.name} exactly as the app does${testCase.lean ? '' : ' (left to the app)'}`, async () => {
      const answers = {} as Record<Instance, Answer>;
      for (const instance of ['lean', 'express'] as const) {
        const tag = `${index}-${instance}`;
        const sent = testCase.request(instance);
        sent.headers = { 'x-request-id': `req-${tag}`, ...sent.headers, [TAG]: tag };
        answers[instance] = await send(base(instance), sent);
      }
      const { lean, express: app } = answers;
      expect(throughExpress.has(`${index}-express`)).to.equal(true);
      expect(throughExpress.has(`${index}-lean`), 'reached the Express app').to.equal(!testCase.lean);
      expect(lean.status, lean.body).to.equal(testCase.status);
      if (testCase.same) {
        expect(headerOf(lean, 'idempotent-replayed')).to.equal('true');
        expect(comparable(lean).headers).to.deep.equal(comparable(app).headers);
        expect(lean.body).to.equal(app.body);
      } else {
        expect(comparable(lean)).to.deep.equal(comparable(app));
      }
      const leanId = headerOf(lean, 'x-request-id') as string;
      const appId = headerOf(app, 'x-request-id') as string;
      if (testCase.name !== 'a request id the ledger does not accept') {
        expect(leanId).to.equal(`req-${index}-lean`);
      } else {
        expect(leanId).to.match(/^[0-9a-f-]{36}$/);
      }
      expect(await accessLine(leanId)).to.deep.equal(await accessLine(appId));
    });
  }

  it('counts the same requests by route and status in its HTTP metrics', async () => {
    const delta = async (instance: Instance) => {
      const now = await requestCounts(instance);
      return Object.fromEntries(
        [...now]
          .map(([series, count]) => [series, count - (metricsBefore[instance].get(series) ?? 0)] as const)
          .filter(([, count]) => count > 0),
      );
    };
    const lean = await delta('lean');
    expect(lean).to.deep.equal(await delta('express'));
    const countOf = (route: string, status: number) =>
      Object.entries(lean).find(
        ([series]) => series.includes(`route="${route}"`) && series.includes(`status="${status}"`),
      )?.[1];
    expect(countOf('/account/:id/deposit', 202)).to.be.greaterThan(5);
    // Refused by the body parser, before any route.
    expect(countOf('unmatched', 400)).to.be.greaterThan(3);
  });

  it('keeps the books balanced', async () => {
    expect(await ledger.audit()).to.include({ ok: true });
  });
});
