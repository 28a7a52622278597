import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { closedPort } from '@payments/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';

describe('gateway with a failing upstream', () => {
  let gw: GatewayUnderTest;
  let hanging: Server;
  before(async () => {
    hanging = createServer(() => {
      // accepts the request and never answers
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const { port } = hanging.address() as { port: number };
    gw = await startGatewayUnderTest({
      LEDGER_URL: `http://127.0.0.1:${await closedPort()}`,
      CURRENCY_URL: `http://127.0.0.1:${port}`,
      UPSTREAM_TIMEOUT_MS: 300,
    });
  });
  after(async () => {
    await gw.stop();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After at once when a service is down', async () => {
    const started = Date.now();
    const response = await gw.fetch('/v1.1/accounts', { token: gw.token() });
    expect(Date.now() - started).to.be.below(1000);
    expect(response.status).to.equal(503);
    expect(response.headers.get('retry-after')).to.equal('1');
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.headers.get('x-api-version')).to.equal('1.1');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE', instance: '/v1.1/accounts' });
    expect(JSON.stringify(body)).not.to.match(/127\.0\.0\.1|ECONNREFUSED/);
  });

  it('answers 503 within the configured timeout when a service hangs', async () => {
    const started = Date.now();
    const response = await gw.fetch('/api/currencies');
    const elapsed = Date.now() - started;
    expect(response.status).to.equal(503);
    expect(elapsed).to.be.within(250, 2000);
    expect(await response.json()).to.include({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('survives a client that gives up while a service hangs', async () => {
    const abandoned = await gw.fetch('/api/currencies', { signal: AbortSignal.timeout(100) }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    expect(abandoned).to.equal('TimeoutError');
    // The service's late failure finds nobody to answer, and the gateway goes on serving.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await gw.fetch('/health')).status).to.equal(200);
  });

  it('cuts the answer short when a service dies halfway through it, and goes on serving', async () => {
    const dying = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    const { port } = dying.address() as { port: number };
    const cut = await startGatewayUnderTest({ CURRENCY_URL: `http://127.0.0.1:${port}` });
    try {
      const outcome = await cut.fetch('/api/currencies').then(
        (response) =>
          response.text().then(
            () => 'whole body',
            () => 'cut short',
          ),
        () => 'cut short',
      );
      expect(outcome).to.equal('cut short');
      expect((await cut.fetch('/health')).status).to.equal(200);
    } finally {
      await cut.stop();
      await new Promise((resolve) => dying.close(resolve));
    }
  });

  it('answers 503 at once when a service dies while reading a request body', async () => {
    const dying = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    const { port } = dying.address() as { port: number };
    const cut = await startGatewayUnderTest({ WEBHOOK_INGEST_URL: `http://127.0.0.1:${port}` });
    try {
      const response = await cut.fetch('/webhook/provider', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ padding: 'x'.repeat(100_000) }),
        signal: AbortSignal.timeout(3000),
      });
      expect(response.status).to.equal(503);
    } finally {
      await cut.stop();
      await new Promise((resolve) => dying.close(resolve));
    }
  });

  it("stays ready while a service is down: only that service's routes answer 503", async () => {
    expect((await gw.fetch('/ready', { service: true })).status).to.equal(200);
  });

  it('keeps the webhook error shape when webhook-ingest is down', async () => {
    const down = await startGatewayUnderTest({
      WEBHOOK_INGEST_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    try {
      const response = await down.fetch('/webhook/payment', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"payment_id":"p","status":"completed"}',
      });
      expect(response.status).to.equal(503);
      expect(response.headers.get('retry-after')).to.equal('1');
      expect(await response.json()).to.have.all.keys('error');
    } finally {
      await down.stop();
    }
  });
});
