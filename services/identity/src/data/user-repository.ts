import type { Knex, Role } from '@payments/service-kit';
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

export interface UserRepository {
  insert(user: NewUserRecord): Promise<InsertResult>;
  findById(id: string): Promise<UserWithCredentials | undefined>;
  /** Case-insensitive, like the unique index. */
  findByUsername(username: string): Promise<UserWithCredentials | undefined>;
  findByEmail(email: string): Promise<UserWithCredentials | undefined>;
  /** Applies the changes and bumps the version; with `expectedVersions`, only when the version is one of them. */
  update(id: string, changes: UserChanges, expectedVersions?: number[]): Promise<UpdateResult>;
  delete(id: string): Promise<boolean>;
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

/** Drops the hash from a record before it leaves a write path. */
function withoutCredentials({ passwordHash: _hash, ...user }: UserWithCredentials): User {
  return user;
}

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
  };
}
