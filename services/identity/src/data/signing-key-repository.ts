import type { Knex } from '@payments/service-kit';

export interface SigningKeyRepository {
  /** The key ids last announced, locked until the transaction ends so concurrent starts announce a change once. */
  lockPublished(): Promise<string[]>;
  recordPublished(kids: string[]): Promise<void>;
}

export function createSigningKeyRepository(db: Knex): SigningKeyRepository {
  return {
    async lockPublished() {
      const row = (await db('published_signing_keys').where({ id: 1 }).forUpdate().first('kids')) as
        { kids: string[] } | undefined;
      return row?.kids ?? [];
    },
    async recordPublished(kids) {
      await db('published_signing_keys').where({ id: 1 }).update({ kids, published_at: db.fn.now() });
    },
  };
}
