import { expect } from 'chai';
import { createLogger } from '@payments/service-kit';
import { useStarted } from '@payments/testkit';
import { startGatewayUnderTest } from './harness.js';

const USER = '00000000-0000-4000-8000-00000000abcd';
const ACCOUNT = '3b241101-e2bb-4255-8caf-4136c566a962';

describe('gateway observability', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('gateway', 'info', { write: (line: string) => lines.push(JSON.parse(line)) });
  const gw = useStarted(() => startGatewayUnderTest({}, { logger }));

  const accessLine = (requestId: string) =>
    lines.find((line) => line.request_id === requestId && line.responseTime !== undefined);

  for (const path of ['/health', '/ready', '/metrics']) {
    it(`echoes X-API-Version on ${path}, with the version asked for`, async () => {
      const service = path !== '/health';
      const plain = await gw.fetch(path, { service });
      expect(plain.status).to.equal(200);
      expect(plain.headers.get('x-api-version')).to.equal('1.0');
      const asked = await gw.fetch(path, { service, headers: { 'x-api-version': '1.1' } });
      expect(asked.headers.get('x-api-version')).to.equal('1.1');
      const prefixed = await gw.fetch(`/v1.1${path}`, { service });
      expect(prefixed.status).to.equal(200);
      expect(prefixed.headers.get('x-api-version')).to.equal('1.1');
    });
  }

  it('logs each request with method, path template, status, duration, user id and request id', async () => {
    const response = await gw.fetch(`/v1.1/account/${ACCOUNT}/deposit`, {
      method: 'POST',
      token: gw.token(USER),
      headers: { 'x-request-id': 'observability-1', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).to.equal(200);
    const line = accessLine('observability-1');
    expect(line, JSON.stringify(lines.slice(-3))).to.not.equal(undefined);
    expect(line).to.include({ route: '/account/{id}/deposit', user_id: USER, msg: 'request completed' });
    expect(line?.req).to.deep.include({ method: 'POST' });
    expect(line?.res).to.deep.equal({ statusCode: 200 });
    expect(line?.responseTime).to.be.a('number');
  });

  it('logs a refused anonymous request with no user and the status it got', async () => {
    await gw.fetch('/accounts', { headers: { 'x-request-id': 'observability-2' } });
    expect(accessLine('observability-2')).to.include({ route: '/accounts', user_id: null });
    expect(accessLine('observability-2')?.res).to.deep.equal({ statusCode: 401 });
  });

  it('counts requests per route template and status in /metrics', async () => {
    await gw.fetch(`/account/${ACCOUNT}/balance`, { token: gw.token() });
    const metrics = await (await gw.fetch('/metrics', { service: true })).text();
    expect(metrics).to.match(
      /http_request_duration_seconds_count\{[^}]*route="\/account\/\{id\}\/balance"[^}]*status="200"[^}]*\} 1/,
    );
  });
});
