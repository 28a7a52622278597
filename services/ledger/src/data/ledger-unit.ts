import type { Knex } from '@payments/service-kit';
import type { ReversalUnit } from '../use-cases/reversals.js';
import { reversalUnitOf } from './reversal-repository.js';
import type { SystemAccounts } from './system-accounts.js';

/** The operations of one database transaction: every change to money goes through here. */
export type LedgerUnit = ReversalUnit;

export function createLedgerUnit(trx: Knex.Transaction, systemAccounts: SystemAccounts): LedgerUnit {
  return {
    ...reversalUnitOf(trx, systemAccounts),
  };
}
