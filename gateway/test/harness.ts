import { loadConfig, type RunningService } from '@payments/service-kit';
import { startTestIssuer, type TestIssuer } from '@payments/testkit';
import { GatewayConfigSchema, startGateway, type GatewayConfig, type GatewayDeps } from '../src/index.js';
import type { UpstreamName } from '../src/domain/route-table.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

export interface GatewayUnderTest {
  url: string;
  gateway: RunningService;
  upstreams: Record<UpstreamName, FakeUpstream>;
  issuer: TestIssuer;
  /** A valid token for `sub` (a fresh user unless given). */
  token(sub?: string): string;
  /** `service` sends the service credential, which `/ready` and `/metrics` require. */
  fetch(path: string, init?: RequestInit & { token?: string; service?: boolean }): Promise<Response>;
  stop(): Promise<void>;
}

export const TEST_SERVICE_TOKEN = 'gateway-test-service-token';

export function testConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    ...loadConfig(GatewayConfigSchema, {}),
    SERVICE_TOKEN: TEST_SERVICE_TOKEN,
    PORT: 0,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_ENABLED: false,
    ...overrides,
  };
}

/** The gateway in-process in front of five recording fake services, with a test token issuer as its JWKS. */
export async function startGatewayUnderTest(
  overrides: Partial<GatewayConfig> = {},
  deps: GatewayDeps = {},
): Promise<GatewayUnderTest> {
  const issuer = await startTestIssuer();
  const names: UpstreamName[] = ['identity', 'ledger', 'currency', 'webhook-ingest', 'webhook-delivery'];
  const fakes = await Promise.all(names.map((name) => startFakeUpstream(name)));
  const upstreams = Object.fromEntries(names.map((name, i) => [name, fakes[i]])) as Record<
    UpstreamName,
    FakeUpstream
  >;
  const gateway = await startGateway(
    testConfig({
      IDENTITY_URL: upstreams.identity.url,
      LEDGER_URL: upstreams.ledger.url,
      CURRENCY_URL: upstreams.currency.url,
      WEBHOOK_INGEST_URL: upstreams['webhook-ingest'].url,
      WEBHOOK_DELIVERY_URL: upstreams['webhook-delivery'].url,
      JWKS_URL: issuer.jwksUrl,
      ...overrides,
    }),
    deps,
  );
  let users = 0;
  const token = (sub = `00000000-0000-4000-8000-${String(++users).padStart(12, '0')}`) =>
    issuer.issue({ sub });
  return {
    url: gateway.url,
    gateway,
    upstreams,
    issuer,
    token,
    fetch: (path, { token: bearer, service, headers, ...init } = {}) =>
      fetch(`${gateway.url}${path}`, {
        ...init,
        headers: {
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
          ...(service ? { authorization: `Bearer ${TEST_SERVICE_TOKEN}` } : {}),
          ...(headers as Record<string, string>),
        },
      }),
    async stop() {
      await gateway.stop();
      await Promise.all([...fakes.map((fake) => fake.close()), issuer.close()]);
    },
  };
}

export function lastRequest(upstream: FakeUpstream) {
  const last = upstream.received.at(-1);
  if (!last) throw new Error('the upstream received nothing');
  return last;
}
