import { expect } from 'chai';
import { createLogger, createMemoryBus, loadConfig, type EventBus } from '@payments/service-kit';
import type { TestDatabase } from '@payments/testkit';
import { CurrencyConfigSchema, startCurrency, type CurrencyDeps } from '../src/index.js';

export interface CurrencyUnderTest {
  url: string;
  bus: EventBus;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

export const quietLogger = createLogger('currency-test', 'silent');

export function testConfig(env: Record<string, string>) {
  return loadConfig(CurrencyConfigSchema, { NODE_ENV: 'test', LOG_LEVEL: 'silent', PORT: '0', ...env });
}

/** The service in-process on a free port, on the given test database and a fresh memory bus. */
export async function startCurrencyOn(
  database: TestDatabase,
  env: Record<string, string> = {},
  deps: CurrencyDeps = {},
): Promise<CurrencyUnderTest> {
  const bus = createMemoryBus(quietLogger);
  const service = await startCurrency(testConfig({ DATABASE_URL: database.url, ...env }), {
    bus,
    logger: quietLogger,
    ...deps,
  });
  return {
    url: service.url,
    bus,
    get: (path, headers = {}) => fetch(`${service.url}${path}`, { headers }),
    async stop() {
      await service.stop();
      await bus.close();
    },
  };
}

export async function expectProblem(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).to.equal(status);
  expect(response.headers.get('content-type')).to.contain('application/problem+json');
  const problem = (await response.json()) as { code: string; status: number };
  expect(problem.code).to.equal(code);
  expect(problem.status).to.equal(status);
}
