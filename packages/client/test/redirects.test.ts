import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ApiError, createPaymentsClient, RedirectError, type PaymentsClient } from '../src/index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A server on 127.0.0.1 that records every request and answers each with `answer`. */
async function startServer(
  answer: (request: Received) => { status: number; headers?: Record<string, string> },
) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(request);
      const { status, headers } = answer(request);
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('@payments/client and redirects', () => {
  let elsewhere: Awaited<ReturnType<typeof startServer>>;
  let api: Awaited<ReturnType<typeof startServer>>;
  let client: PaymentsClient;
  let status = 302;

  before(async () => {
    elsewhere = await startServer(() => ({ status: 200, headers: { 'content-type': 'application/json' } }));
    api = await startServer((request) => ({
      status,
      headers: { location: `${elsewhere.url}/collect${request.url}` },
    }));
    client = createPaymentsClient({ baseUrl: api.url, token: 'header.payload.signature', maxRetries: 2 });
  });

  after(async () => {
    await api?.close();
    await elsewhere?.close();
  });

  beforeEach(() => {
    api.received.length = 0;
    elsewhere.received.length = 0;
  });

  for (const redirect of [302, 307, 308]) {
    it(`rejects a call answered ${redirect} with a RedirectError, once, and sends nothing where it points`, async () => {
      status = redirect;
      const failure = await client.money
        .deposit('7b0f7c2e-4a4b-4d6e-9a8e-5f0e3c1d2b1a', { amount: '10.00', currency: 'USD' })
        .catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(RedirectError).and.to.be.instanceOf(ApiError);
      expect(failure).to.include({ status: redirect });
      expect((failure as RedirectError).location).to.match(new RegExp(`^${elsewhere.url}/collect/`));
      expect(api.received).to.have.length(1);
      expect(api.received[0]?.headers.authorization).to.equal('Bearer header.payload.signature');
      expect(elsewhere.received).to.deep.equal([]);
    });
  }

  it('answers a raw request with the redirect as it came, and sends nothing where it points', async () => {
    status = 302;
    const answer = await client.rawRequest('POST', '/webhook/payment', {
      versioned: false,
      body: { payment_id: 'p', status: 'completed' },
    });
    expect(answer.status).to.equal(302);
    expect(answer.headers.get('location')).to.equal(`${elsewhere.url}/collect/webhook/payment`);
    expect(api.received).to.have.length(1);
    expect(elsewhere.received).to.deep.equal([]);
  });

  it("tells a fetch of the caller's own not to follow redirects either", async () => {
    const asked: RequestInit['redirect'][] = [];
    const own = createPaymentsClient({
      baseUrl: api.url,
      token: 'header.payload.signature',
      fetch: (input, init) => {
        asked.push(init?.redirect);
        return fetch(input, init);
      },
    });
    await own.accounts
      .list()
      .toArray()
      .catch(() => undefined);
    await own.rawRequest('GET', '/health', { versioned: false });
    expect(asked).to.deep.equal(['manual', 'manual']);
    expect(elsewhere.received).to.deep.equal([]);
  });
});
