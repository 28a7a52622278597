import pg from 'pg';

/** Runs `work` on a PostgreSQL connection of its own to `url`, closed after it whatever happens. */
export async function withPgClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
