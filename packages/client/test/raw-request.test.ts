import { expect } from 'chai';
import {
  ConnectionError,
  createPaymentsClient,
  RequestTimeoutError,
  type ClientOptions,
  type TokenProvider,
} from '../src/index.js';

interface Sent {
  method: string;
  url: string;
  headers: Headers;
  body: string | null;
}

const tokens = new Map<string, string>();
/**
 * A token the session can read the lifetime of (15 minutes from when it was first named), unsigned: nothing here
 * checks it. The same name is the same token, so a test can name the one the fake issued a second earlier.
 */
function tokenNamed(name: string): string {
  const known = tokens.get(name);
  if (known) return known;
  const now = Math.floor(Date.now() / 1000);
  const payload = Buffer.from(JSON.stringify({ sub: name, iat: now, exp: now + 900 })).toString('base64url');
  const token = `header.${payload}.${name}`;
  tokens.set(name, token);
  return token;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/**
 * A fetch that records each request and answers from `answers` in turn (a function gets the request; `'drop'`
 * fails it as a refused connection would); a login is answered with a token of its own.
 */
function fakeApi(answers: (Response | 'drop' | ((sent: Sent) => Response))[] = []) {
  const sent: Sent[] = [];
  let logins = 0;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request: Sent = {
      method: init?.method ?? 'GET',
      url: String(input),
      headers: new Headers(init?.headers),
      body: init?.body === undefined ? null : String(init.body),
    };
    if (request.url.endsWith('/auth/login')) {
      logins += 1;
      return json(200, { token: tokenNamed(`login-${logins}`), token_type: 'Bearer', expires_in: 900 });
    }
    sent.push(request);
    const answer = answers.shift() ?? new Response(null, { status: 204 });
    if (answer === 'drop') throw new TypeError('fetch failed');
    return typeof answer === 'function' ? answer(request) : answer;
  };
  return { fetch, sent, logins: () => logins };
}

const clientWith = (api: ReturnType<typeof fakeApi>, options: Partial<ClientOptions> = {}) =>
  createPaymentsClient({
    baseUrl: 'http://api.test/',
    fetch: api.fetch,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 5,
    ...options,
  });

const pathOf = (sent: Sent | undefined) => {
  const url = new URL(sent?.url ?? 'http://nothing.sent/');
  return url.pathname + url.search;
};

describe('client.rawRequest', () => {
  describe('the path', () => {
    it('gets the client’s version prefix, as the operations get it', async () => {
      const api = fakeApi();
      const client = clientWith(api);
      await client.rawRequest('GET', '/accounts?limit=5');
      await client.rawRequest('GET', '/');
      await client.rawRequest('GET', '/?x=1');
      await createPaymentsClient({
        baseUrl: 'http://api.test',
        apiVersion: '1.0',
        fetch: api.fetch,
      }).rawRequest('GET', '/accounts');
      expect(api.sent.map(pathOf)).to.deep.equal([
        '/v1.1/accounts?limit=5',
        '/v1.1',
        '/v1.1?x=1',
        '/v1.0/accounts',
      ]);
    });

    it('goes as written when it carries a version already, or with versioned: false', async () => {
      const api = fakeApi();
      const client = clientWith(api);
      await client.rawRequest('GET', '/v1.0/accounts');
      await client.rawRequest('GET', '/v2.0/accounts');
      await client.rawRequest('GET', '/v1.1');
      await client.rawRequest('GET', '/accounts', { versioned: false });
      await client.rawRequest('POST', '/webhook/payment', { versioned: false, body: {} });
      // Not a version segment: prefixed like any other path.
      await client.rawRequest('GET', '/versions');
      expect(api.sent.map(pathOf)).to.deep.equal([
        '/v1.0/accounts',
        '/v2.0/accounts',
        '/v1.1',
        '/accounts',
        '/webhook/payment',
        '/v1.1/versions',
      ]);
    });

    it('refuses a path without its leading /, a body given twice, and a token with auth: false', async () => {
      const client = clientWith(fakeApi());
      for (const attempt of [
        () => client.rawRequest('GET', 'accounts'),
        () => client.rawRequest('POST', '/account', { body: {}, rawBody: '{}' }),
        () => client.rawRequest('GET', '/accounts', { token: 'a', auth: false }),
      ]) {
        const error = await attempt().then(
          () => expect.fail('accepted'),
          (failure: unknown) => failure,
        );
        expect(error).to.be.instanceOf(TypeError);
      }
    });
  });

  describe('the answer', () => {
    it('resolves with every status, the body parsed when it is JSON and the text as received', async () => {
      const problem = { status: 422, code: 'INSUFFICIENT_FUNDS', title: 't', detail: 'd' };
      const api = fakeApi([
        json(422, problem, { 'x-request-id': 'r-1' }),
        json(500, { status: 500, code: 'INTERNAL_ERROR' }),
        new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
        new Response(null, { status: 204 }),
        new Response(null, { status: 304 }),
      ]);
      const client = clientWith(api);
      const refused = await client.rawRequest('POST', '/account/a/withdraw', { body: { amount: 1 } });
      expect(refused).to.include({ status: 422, text: JSON.stringify(problem) });
      expect(refused.body).to.deep.equal(problem);
      expect(refused.headers.get('x-request-id')).to.equal('r-1');
      expect((await client.rawRequest('GET', '/accounts')).status).to.equal(500);
      const html = await client.rawRequest('GET', '/accounts');
      expect(html).to.include({ status: 502, body: null, text: '<html>bad gateway</html>' });
      expect(await client.rawRequest('DELETE', '/user/u')).to.include({ status: 204, body: null, text: '' });
      expect((await client.rawRequest('GET', '/api/currencies')).status).to.equal(304);
    });
  });

  describe('what it sends', () => {
    it('the client’s headers and the caller’s, a JSON body with its type, and nothing the caller did not ask', async () => {
      const api = fakeApi();
      const client = clientWith(api, { headers: { 'user-agent': 'e2e/1' } });
      await client.rawRequest('post', '/account', {
        body: { currency: 'USD' },
        headers: { 'x-forwarded-for': '198.51.100.7' },
        idempotencyKey: 'key-1',
      });
      const [sent] = api.sent;
      expect(sent?.method).to.equal('POST');
      expect(sent?.body).to.equal('{"currency":"USD"}');
      expect(Object.fromEntries(sent?.headers ?? [])).to.deep.equal({
        'user-agent': 'e2e/1',
        'x-forwarded-for': '198.51.100.7',
        'content-type': 'application/json',
        'idempotency-key': 'key-1',
      });
    });

    it('a raw body exactly as given, with the caller’s content type', async () => {
      const api = fakeApi();
      const client = clientWith(api);
      await client.rawRequest('POST', '/account', {
        rawBody: '{"currency": ',
        headers: { 'content-type': 'application/json' },
      });
      await client.rawRequest('POST', '/account', {
        body: 'amount=10',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(api.sent[0]?.body).to.equal('{"currency": ');
      expect(api.sent[0]?.headers.get('content-type')).to.equal('application/json');
      // A `body` is JSON whatever the content type says: the caller chose to send a mismatch.
      expect(api.sent[1]?.body).to.equal('"amount=10"');
      expect(api.sent[1]?.headers.get('content-type')).to.equal('application/x-www-form-urlencoded');
    });
  });

  describe('the token', () => {
    it('is the session’s, logged in on first need, unless another token or auth: false is given', async () => {
      const api = fakeApi();
      const client = clientWith(api, { credentials: { username: 'alice', password: 'a password' } });
      await client.rawRequest('GET', '/accounts');
      await client.rawRequest('GET', '/accounts', { token: 'someone-else' });
      await client.rawRequest('GET', '/accounts', { auth: false });
      await client.rawRequest('GET', '/internal/audit', {
        versioned: false,
        headers: { authorization: 'Bearer service-credential' },
      });
      await client.rawRequest('GET', '/accounts');
      expect(api.sent.map((sent) => sent.headers.get('authorization'))).to.deep.equal([
        `Bearer ${tokenNamed('login-1')}`,
        'Bearer someone-else',
        null,
        'Bearer service-credential',
        `Bearer ${tokenNamed('login-1')}`,
      ]);
      expect(api.logins()).to.equal(1);
    });

    it('is none for a client that has no way to get one, and the held one after auth.login', async () => {
      const api = fakeApi();
      const client = clientWith(api);
      await client.rawRequest('GET', '/accounts');
      await client.auth.login({ username: 'alice', password: 'a password' });
      await client.rawRequest('GET', '/accounts');
      const given = clientWith(api, { token: 'held-token' });
      await given.rawRequest('GET', '/accounts');
      expect(api.sent.map((sent) => sent.headers.get('authorization'))).to.deep.equal([
        null,
        `Bearer ${tokenNamed('login-1')}`,
        'Bearer held-token',
      ]);
    });

    it('comes from a tokenProvider when the client has one', async () => {
      const api = fakeApi();
      const provider: TokenProvider = { getToken: async () => 'provided-token' };
      await clientWith(api, { tokenProvider: provider }).rawRequest('GET', '/accounts');
      expect(api.sent[0]?.headers.get('authorization')).to.equal('Bearer provided-token');
    });

    it('is not sent again after a 401: the answer is the 401, and the session keeps its token', async () => {
      const api = fakeApi([json(401, { status: 401, code: 'AUTH_REQUIRED' })]);
      const client = clientWith(api, { credentials: { username: 'alice', password: 'a password' } });
      expect((await client.rawRequest('GET', '/accounts')).status).to.equal(401);
      expect((await client.rawRequest('GET', '/accounts')).status).to.equal(204);
      expect(api.sent).to.have.length(2);
      expect(api.logins()).to.equal(1);
    });
  });

  describe('retries', () => {
    const unavailable = () => json(503, { status: 503, code: 'SERVICE_UNAVAILABLE' });

    it('makes none unless asked, whatever the client’s maxRetries', async () => {
      const api = fakeApi([unavailable(), 'drop']);
      const client = clientWith(api, { maxRetries: 3 });
      expect((await client.rawRequest('GET', '/accounts')).status).to.equal(503);
      const dropped = await client.rawRequest('GET', '/accounts').catch((error: unknown) => error);
      expect(dropped).to.be.instanceOf(ConnectionError);
      expect(api.sent).to.have.length(2);
    });

    it('when asked, retries a read or a keyed write, and resolves with the last answer when they run out', async () => {
      const api = fakeApi([
        unavailable(),
        'drop',
        json(200, { data: [] }),
        unavailable(),
        unavailable(),
        json(429, { status: 429 }, { 'retry-after': '0' }),
        json(202, { id: 't-1' }),
      ]);
      const client = clientWith(api);
      expect((await client.rawRequest('GET', '/accounts', { maxRetries: 2 })).status).to.equal(200);
      expect((await client.rawRequest('GET', '/accounts', { maxRetries: 1 })).status).to.equal(503);
      const deposit = await client.rawRequest('POST', '/account/a/deposit', {
        body: { amount: 1, currency: 'USD' },
        idempotencyKey: 'key-2',
        maxRetries: 1,
      });
      expect(deposit).to.include({ status: 202 });
      expect(api.sent.slice(-2).map((sent) => sent.headers.get('idempotency-key'))).to.deep.equal([
        'key-2',
        'key-2',
      ]);
      expect(api.sent).to.have.length(7);
    });

    it('never retries a write without an Idempotency-Key, even when asked', async () => {
      const api = fakeApi([unavailable(), unavailable()]);
      const answer = await clientWith(api).rawRequest('POST', '/account', { body: {}, maxRetries: 3 });
      expect(answer.status).to.equal(503);
      expect(api.sent).to.have.length(1);
    });
  });

  describe('ending a call', () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }),
      );

    it('rejects with RequestTimeoutError past its timeout', async () => {
      const client = createPaymentsClient({ baseUrl: 'http://api.test', fetch: hanging });
      const error = await client
        .rawRequest('GET', '/accounts', { timeoutMs: 50 })
        .catch((failure: unknown) => failure);
      expect(error).to.be.instanceOf(RequestTimeoutError);
    });

    it('rejects with the reason of the caller’s signal', async () => {
      const client = createPaymentsClient({ baseUrl: 'http://api.test', fetch: hanging });
      const controller = new AbortController();
      const pending = client.rawRequest('GET', '/accounts', { signal: controller.signal });
      const reason = new Error('the caller gave up');
      controller.abort(reason);
      expect(await pending.catch((failure: unknown) => failure)).to.equal(reason);
    });
  });
});
