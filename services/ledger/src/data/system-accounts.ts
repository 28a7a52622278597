import { randomUUID } from 'node:crypto';
import type { Knex } from '@payments/service-kit';
import type { SystemCode } from '../domain/settlement.js';

export interface SystemAccounts {
  /** The id of the system account for a code and currency, created in `trx` on first use. */
  idOf(trx: Knex.Transaction, code: SystemCode, currency: string): Promise<string>;
}

/**
 * System accounts are created lazily inside the settling transaction (no second pool connection needed) and
 * never deleted, so an id is cached only once its row was seen committed.
 */
export function createSystemAccounts(): SystemAccounts {
  const committed = new Map<string, string>();
  const find = async (trx: Knex.Transaction, code: SystemCode, currency: string) => {
    const row: { id: string } | undefined = await trx('accounts')
      .where({ kind: 'system', system_code: code, currency })
      .first('id');
    return row?.id;
  };
  return {
    async idOf(trx, code, currency) {
      const key = `${code}:${currency}`;
      const cached = committed.get(key);
      if (cached) return cached;
      const existing = await find(trx, code, currency);
      if (existing) {
        committed.set(key, existing);
        return existing;
      }
      const created: { id: string }[] = await trx
        .raw(
          `INSERT INTO accounts (id, kind, system_code, currency) VALUES (?, 'system', ?, ?)
         ON CONFLICT (system_code, currency) WHERE kind = 'system' DO NOTHING RETURNING id`,
          [randomUUID(), code, currency],
        )
        .then((result: { rows: { id: string }[] }) => result.rows);
      if (created[0]) return created[0].id;
      // Someone else created it and committed while we waited on the unique index.
      const raced = await find(trx, code, currency);
      if (!raced) throw new Error(`system account ${key} could not be created`);
      committed.set(key, raced);
      return raced;
    },
  };
}
