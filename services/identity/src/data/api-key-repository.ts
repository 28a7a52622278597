import type { ApiKeyScope } from '@payments/contracts';
import {
  readByCursor,
  type KeysetOrder,
  type Knex,
  type Page,
  type PageRequest,
} from '@payments/service-kit';

export interface ApiKey {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  last4: string;
  /** Null: a secret key, with all its user's powers. */
  scopes: ApiKeyScope[] | null;
  livemode: boolean;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

export interface NewApiKey extends Omit<ApiKey, 'lastUsedAt' | 'revokedAt' | 'createdAt'> {
  secretHash: Buffer;
}

export interface ApiKeyRepository {
  insert(key: NewApiKey): Promise<ApiKey>;
  /** The key whose secret hashes to this, revoked or not; undefined when none does. */
  findByHash(secretHash: Buffer): Promise<ApiKey | undefined>;
  /** The user's keys not revoked, newest first. */
  listActive(userId: string, page: PageRequest): Promise<Page<ApiKey>>;
  /** Marks the user's key revoked; undefined when the user has no such key not revoked yet. */
  revoke(userId: string, id: string): Promise<ApiKey | undefined>;
  /** Records a use, at most once a minute per key (a write per request would cost more than it tells). */
  touch(id: string): Promise<void>;
}

interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  last4: string;
  scopes: string[] | null;
  livemode: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const NEWEST_FIRST: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' };

const COLUMNS = [
  'id',
  'user_id',
  'name',
  'prefix',
  'last4',
  'scopes',
  'livemode',
  'expires_at',
  'last_used_at',
  'revoked_at',
  'created_at',
];

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  prefix: row.prefix,
  last4: row.last4,
  scopes: row.scopes as ApiKeyScope[] | null,
  livemode: row.livemode,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
  createdAt: row.created_at,
});

export function createApiKeyRepository(db: Knex): ApiKeyRepository {
  return {
    async insert(key) {
      const [row] = (await db('api_keys')
        .insert({
          id: key.id,
          user_id: key.userId,
          name: key.name,
          prefix: key.prefix,
          last4: key.last4,
          secret_hash: key.secretHash,
          scopes: key.scopes,
          livemode: key.livemode,
          expires_at: key.expiresAt,
        })
        .returning(COLUMNS)) as ApiKeyRow[];
      return toApiKey(row as ApiKeyRow);
    },
    async findByHash(secretHash) {
      const row = (await db('api_keys').where({ secret_hash: secretHash }).first(COLUMNS)) as
        ApiKeyRow | undefined;
      return row && toApiKey(row);
    },
    async listActive(userId, page) {
      const active = () => db('api_keys').where({ user_id: userId }).whereNull('revoked_at');
      const counted = active().count<{ count: string }[]>({ count: '*' });
      const total = async () => Number((await counted)[0]?.count ?? 0);
      if (page.cursor) {
        const [{ rows, hasMore }, n] = await Promise.all([
          readByCursor<ApiKeyRow>(db, active, COLUMNS, { ...page, cursor: page.cursor }, NEWEST_FIRST),
          total(),
        ]);
        return { data: rows.map(toApiKey), total: n, hasMore };
      }
      const [rows, n] = await Promise.all([
        active()
          .select(COLUMNS)
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(page.limit)
          .offset(page.offset) as Promise<ApiKeyRow[]>,
        total(),
      ]);
      return { data: rows.map(toApiKey), total: n };
    },
    async revoke(userId, id) {
      const [row] = (await db('api_keys')
        .where({ id, user_id: userId })
        .whereNull('revoked_at')
        .update({ revoked_at: db.fn.now() })
        .returning(COLUMNS)) as ApiKeyRow[];
      return row && toApiKey(row);
    },
    async touch(id) {
      await db('api_keys')
        .where({ id })
        .andWhereRaw("(last_used_at IS NULL OR last_used_at < now() - interval '1 minute')")
        .update({ last_used_at: db.fn.now() });
    },
  };
}
