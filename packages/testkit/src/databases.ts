import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { findInfrastructure } from './infrastructure.js';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, uniquely named database URL for one test run; the service creates and migrates it on start. */
export async function createTestDatabase(prefix = 'test'): Promise<TestDatabase> {
  const { postgresUrl } = await findInfrastructure();
  const name = `payments_${prefix.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => dropDatabase(postgresUrl, name) };
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
