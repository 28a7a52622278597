import type { EventData } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';

export type Revocation = EventData<'TokenRevoked'>;

export interface RevocationRepository {
  /** False when the token (`jti`) was revoked already: of concurrent revocations of one token, one inserts. */
  insert(revocation: Revocation): Promise<boolean>;
  /** Whether a stored user-wide revocation covers this token of the user (issued at `issuedAt`, unix seconds). */
  coversToken(token: { userId: string; jti: string; issuedAt: number }): Promise<boolean>;
  /** Revocations that still matter at `now` (unix seconds): their tokens have not expired yet. */
  listActive(now: number): Promise<Revocation[]>;
  deleteExpired(now: number): Promise<number>;
}

interface RevocationRow {
  jti: string | null;
  user_id: string | null;
  issued_before: string | null;
  except_jti: string | null;
  expires_at: string;
}

function toRevocation(row: RevocationRow): Revocation {
  return {
    ...(row.jti !== null && { jti: row.jti }),
    ...(row.user_id !== null && { user_id: row.user_id }),
    ...(row.issued_before !== null && { issued_before: Number(row.issued_before) }),
    ...(row.except_jti !== null && { except_jti: row.except_jti }),
    expires_at: Number(row.expires_at),
  };
}

export function createRevocationRepository(db: Knex): RevocationRepository {
  return {
    async insert(revocation) {
      // The unique jti decides the race; user-wide revocations have no jti (NULLs never conflict).
      const inserted = (await db('revocations')
        .insert({
          jti: revocation.jti ?? null,
          user_id: revocation.user_id ?? null,
          issued_before: revocation.issued_before ?? null,
          except_jti: revocation.except_jti ?? null,
          expires_at: revocation.expires_at,
        })
        .onConflict('jti')
        .ignore()
        .returning('id')) as unknown[];
      return inserted.length > 0;
    },
    async coversToken({ userId, jti, issuedAt }) {
      const covering = await db('revocations')
        .where({ user_id: userId })
        .andWhere('issued_before', '>', issuedAt)
        .andWhere((spared) => {
          spared.whereNull('except_jti').orWhereNot('except_jti', jti);
        })
        .first('id');
      return covering !== undefined;
    },
    async listActive(now) {
      const rows = (await db('revocations')
        .select('jti', 'user_id', 'issued_before', 'except_jti', 'expires_at')
        .where('expires_at', '>=', now)
        .orderBy('id')) as RevocationRow[];
      return rows.map(toRevocation);
    },
    async deleteExpired(now) {
      return db('revocations').where('expires_at', '<', now).delete();
    },
  };
}
