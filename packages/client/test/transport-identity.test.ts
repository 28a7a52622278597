import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { CLIENT_VERSION, createPaymentsClient, AuthenticationError } from '../src/index.js';
import { defaultUserAgent } from '../src/runtime.js';

const BASE_URL = 'http://payments.test';

/** A fetch that answers every call with `status` and a JSON body, and keeps each request's headers. */
function answering(
  status = 200,
  body: unknown = { data: [], pagination: { limit: 10, offset: 0, total: 0 } },
) {
  const sent: Headers[] = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    sent.push(new Headers(init?.headers));
    const problem = { type: 'about:blank', title: 'Unauthorized', status, code: 'AUTH_REQUIRED' };
    return new Response(JSON.stringify(status < 300 ? body : problem), {
      status,
      headers: { 'content-type': status < 300 ? 'application/json' : 'application/problem+json' },
    });
  };
  return { fetch, sent };
}

describe('what the client says about itself: User-Agent and API keys', () => {
  it('CLIENT_VERSION is the package’s version', async () => {
    const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(CLIENT_VERSION).to.equal(manifest.version);
  });

  it('sends payments-client/<version> node/<version>, on operations and raw requests alike', async () => {
    const { fetch, sent } = answering();
    const client = createPaymentsClient({ baseUrl: BASE_URL, fetch, token: 'not-a-jwt' });
    await client.accounts.listPage();
    await client.rawRequest('GET', '/health', { versioned: false, auth: false });
    const expected = `payments-client/${CLIENT_VERSION} node/${process.versions.node}`;
    expect(sent.map((headers) => headers.get('user-agent'))).to.deep.equal([expected, expected]);
  });

  it('puts the caller’s product first, and a User-Agent header replaces it', async () => {
    const prefixed = answering();
    await createPaymentsClient({
      baseUrl: BASE_URL,
      fetch: prefixed.fetch,
      token: 't',
      userAgent: 'shop/1.2',
    }).accounts.listPage();
    expect(prefixed.sent[0]?.get('user-agent')).to.equal(
      `shop/1.2 payments-client/${CLIENT_VERSION} node/${process.versions.node}`,
    );
    const replaced = answering();
    const client = createPaymentsClient({
      baseUrl: BASE_URL,
      fetch: replaced.fetch,
      token: 't',
      headers: { 'User-Agent': 'mine/1' },
    });
    await client.accounts.listPage({}, { headers: { 'user-agent': 'this-call/2' } });
    await client.accounts.listPage();
    expect(replaced.sent.map((headers) => headers.get('user-agent'))).to.deep.equal([
      'this-call/2',
      'mine/1',
    ]);
  });

  it('names the runtime it finds, and leaves a browser’s own User-Agent alone', () => {
    const client = `payments-client/${CLIENT_VERSION}`;
    expect(defaultUserAgent(undefined, { process: { versions: { node: '22.1.0', bun: '1.2.3' } } })).to.equal(
      `${client} bun/1.2.3`,
    );
    expect(defaultUserAgent(undefined, { Deno: { version: { deno: '2.1.4' } } })).to.equal(
      `${client} deno/2.1.4`,
    );
    expect(defaultUserAgent('app/1', { navigator: { userAgent: 'Cloudflare-Workers' } })).to.equal(
      `app/1 ${client} Cloudflare-Workers`,
    );
    expect(defaultUserAgent(undefined, {})).to.equal(client);
    const browser = { navigator: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' } };
    expect(defaultUserAgent('app/1', browser)).to.equal(null);
  });

  it('sends an API key as the bearer token on every call, raw ones too, and never refreshes it', async () => {
    const { fetch, sent } = answering();
    const client = createPaymentsClient({ baseUrl: BASE_URL, fetch, apiKey: 'sk_test_51abc' });
    await client.accounts.listPage();
    await client.transactions.listPage();
    await client.rawRequest('GET', '/accounts');
    expect(sent.map((headers) => headers.get('authorization'))).to.deep.equal([
      'Bearer sk_test_51abc',
      'Bearer sk_test_51abc',
      'Bearer sk_test_51abc',
    ]);
    // No login, no refresh: three calls, three requests.
    expect(sent).to.have.length(3);
  });

  it('a refused API key is the call’s 401, sent once (there is nothing to refresh)', async () => {
    const { fetch, sent } = answering(401);
    const client = createPaymentsClient({ baseUrl: BASE_URL, fetch, apiKey: 'sk_test_revoked' });
    const error = await client.accounts.listPage().then(
      () => expect.fail('succeeded'),
      (caught: unknown) => caught,
    );
    expect(error).to.be.instanceOf(AuthenticationError);
    expect(sent).to.have.length(1);
  });

  it('refuses an API key given with another way of authenticating, or an empty one', () => {
    expect(() =>
      createPaymentsClient({
        baseUrl: BASE_URL,
        apiKey: 'sk_test_1',
        credentials: { username: 'a', password: 'b' },
      }),
    ).to.throw(TypeError, /apiKey is used alone, not with credentials/);
    expect(() => createPaymentsClient({ baseUrl: BASE_URL, apiKey: 'sk_test_1', token: 't' })).to.throw(
      TypeError,
    );
    expect(() => createPaymentsClient({ baseUrl: BASE_URL, apiKey: '' })).to.throw(TypeError, /apiKey/);
    expect(() => createPaymentsClient({ baseUrl: BASE_URL, apiKey: 'sk_test 1\n' })).to.throw(
      TypeError,
      /apiKey/,
    );
  });
});
