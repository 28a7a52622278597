import {
  readByCursor,
  type KeysetOrder,
  type Knex,
  type Page,
  type PageRequest,
  type Role,
} from '@payments/service-kit';
import type { User, UserStatus, UserWithCredentials } from '../domain/user.js';

export type UniqueField = 'username' | 'email';

export type InsertResult = { ok: true; user: User } | { ok: false; duplicate: UniqueField };

export type UpdateResult =
  | { ok: true; user: User }
  | { ok: false; reason: 'not-found' | 'stale' }
  | { ok: false; reason: 'duplicate'; field: UniqueField };

export interface NewUserRecord {
  id: string;
  username: string;
  email: string;
  passwordHash: string;
  role: Role;
}

export interface UserChanges {
  username?: string;
  email?: string;
  passwordHash?: string;
  status?: UserStatus;
  tokensValidFrom?: number;
}

/** A user whose row this transaction has locked, and when: the database's clock, in unix seconds. */
export type LockedUser = UserWithCredentials & { lockedAt: number };

/** `share` keeps the row from changing; `update` is for the one transaction that will change it. */
export type LockMode = 'share' | 'update';

/** What an admin looks users up by; every criterion given must hold. */
export interface UserSearch {
  /** Any case, like the unique index. */
  username?: string;
  /** Lower case, as stored. */
  email?: string;
  /** The start of the username (any case) or of the e-mail address. */
  prefix?: string;
  /** The start of the id, any case. */
  idPrefix?: string;
  status?: UserStatus;
}

export interface UserRepository {
  insert(user: NewUserRecord): Promise<InsertResult>;
  findById(id: string): Promise<UserWithCredentials | undefined>;
  /** Case-insensitive, like the unique index. */
  findByUsername(username: string): Promise<UserWithCredentials | undefined>;
  findByEmail(email: string): Promise<UserWithCredentials | undefined>;
  /** Locks the user's row until the transaction ends (in a transaction only); undefined when there is none. */
  lock(id: string, mode: LockMode): Promise<LockedUser | undefined>;
  /** Applies the changes and bumps the version; with `expectedVersions`, only when the version is one of them. */
  update(id: string, changes: UserChanges, expectedVersions?: number[]): Promise<UpdateResult>;
  delete(id: string): Promise<boolean>;
  /** Ordered by username; `total` counts every match. */
  search(criteria: UserSearch, page: PageRequest): Promise<Page<User>>;
}

interface UserRow {
  id: string;
  username: string;
  email: string;
  password_hash: string;
  role: Role;
  status: UserStatus;
  version: number;
  tokens_valid_from: string;
  created_at: Date;
  updated_at: Date;
}

const UNIQUE_VIOLATION = '23505';
const UNIQUE_INDEXES: Record<string, UniqueField> = {
  users_username_unique: 'username',
  users_email_unique: 'email',
};

function duplicateFieldOf(error: unknown): UniqueField | undefined {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  return code === UNIQUE_VIOLATION && constraint ? UNIQUE_INDEXES[constraint] : undefined;
}

function toUser(row: UserRow): UserWithCredentials {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    passwordHash: row.password_hash,
    role: row.role,
    status: row.status,
    version: row.version,
    tokensValidFrom: Number(row.tokens_valid_from),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A LIKE pattern matching what starts with `text`, its wildcards taken literally (escaped with `!`). */
function startsWith(text: string): string {
  return `${text.replace(/[!%_]/g, '!$&')}%`;
}

/** Drops the hash from a record before it leaves a write path. */
function withoutCredentials({ passwordHash: _hash, ...user }: UserWithCredentials): User {
  return user;
}

/** Users by name, as the admins' list shows them. */
const BY_USERNAME: KeysetOrder = { keys: ['lower(username)', 'id'], direction: 'asc' };

export function createUserRepository(db: Knex): UserRepository {
  const findOne = async (where: (query: Knex.QueryBuilder) => Knex.QueryBuilder) => {
    const row = (await where(db<UserRow>('users').select('*')).first()) as UserRow | undefined;
    return row ? toUser(row) : undefined;
  };

  return {
    async insert(user) {
      try {
        const [row] = (await db('users')
          .insert({
            id: user.id,
            username: user.username,
            email: user.email,
            password_hash: user.passwordHash,
            role: user.role,
          })
          .returning('*')) as UserRow[];
        return { ok: true, user: withoutCredentials(toUser(row as UserRow)) };
      } catch (error) {
        const field = duplicateFieldOf(error);
        if (field) return { ok: false, duplicate: field };
        throw error;
      }
    },

    findById: (id) => findOne((query) => query.where({ id })),
    findByUsername: (username) =>
      findOne((query) => query.whereRaw('lower(username) = lower(?)', [username])),
    findByEmail: (email) => findOne((query) => query.where({ email })),

    async lock(id, mode) {
      const row = (await db
        .with('locked', (locking) => {
          const query = locking.select('*').from('users').where({ id });
          return mode === 'update' ? query.forUpdate() : query.forShare();
        })
        // Read in the outer query, which runs only once the lock is granted: clock_timestamp(), unlike now(), is
        // the time of reading, so whatever held the lock before has committed by then.
        .select('*', db.raw('floor(extract(epoch FROM clock_timestamp()))::bigint AS locked_at'))
        .from('locked')
        .first()) as (UserRow & { locked_at: string }) | undefined;
      return row ? { ...toUser(row), lockedAt: Number(row.locked_at) } : undefined;
    },

    async update(id, changes, expectedVersions) {
      const patch = {
        ...(changes.username !== undefined && { username: changes.username }),
        ...(changes.email !== undefined && { email: changes.email }),
        ...(changes.passwordHash !== undefined && { password_hash: changes.passwordHash }),
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.tokensValidFrom !== undefined && { tokens_valid_from: changes.tokensValidFrom }),
        version: db.raw('version + 1'),
        updated_at: db.fn.now(),
      };
      let rows: UserRow[];
      try {
        const query = db('users').where({ id });
        if (expectedVersions) query.whereIn('version', expectedVersions);
        rows = (await query.update(patch).returning('*')) as UserRow[];
      } catch (error) {
        const field = duplicateFieldOf(error);
        if (field) return { ok: false, reason: 'duplicate', field };
        throw error;
      }
      const [row] = rows;
      if (row) return { ok: true, user: withoutCredentials(toUser(row)) };
      const exists = await db('users').where({ id }).first('id');
      return { ok: false, reason: exists ? 'stale' : 'not-found' };
    },

    async delete(id) {
      return (await db('users').where({ id }).delete()) > 0;
    },

    async search(criteria, { limit, offset, cursor }) {
      const matching = () => {
        const query = db<UserRow>('users');
        if (criteria.username !== undefined)
          query.whereRaw('lower(username) = lower(?)', [criteria.username]);
        if (criteria.email !== undefined) query.where({ email: criteria.email });
        if (criteria.prefix !== undefined) {
          const pattern = startsWith(criteria.prefix.toLowerCase());
          // Each side has a text_pattern_ops index, which serves a prefix LIKE whatever the collation.
          query.where((either) => {
            either
              .whereRaw("lower(username) LIKE ? ESCAPE '!'", [pattern])
              .orWhereRaw("email LIKE ? ESCAPE '!'", [pattern]);
          });
        }
        // No index serves this; an operator's look-up, over a table one row per user.
        if (criteria.idPrefix !== undefined)
          query.whereRaw("id::text LIKE ? ESCAPE '!'", [startsWith(criteria.idPrefix.toLowerCase())]);
        if (criteria.status !== undefined) query.where({ status: criteria.status });
        return query;
      };
      const counted = matching().count({ n: '*' }).first();
      const total = async () => Number(((await counted) as { n: string | number } | undefined)?.n ?? 0);
      const toItem = (row: UserRow) => withoutCredentials(toUser(row));
      if (cursor) {
        const [{ rows, hasMore }, n] = await Promise.all([
          readByCursor<UserRow>(db, matching, '*', { limit, offset, cursor }, BY_USERNAME),
          total(),
        ]);
        return { data: rows.map(toItem), total: n, hasMore };
      }
      const [rows, n] = await Promise.all([
        matching().select('*').orderByRaw('lower(username)').orderBy('id').limit(limit).offset(offset),
        total(),
      ]);
      return { data: (rows as UserRow[]).map(toItem), total: n };
    },
  };
}
