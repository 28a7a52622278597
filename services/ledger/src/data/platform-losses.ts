import { toMinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import {
  lossAsReversal,
  type LossReason,
  type NewPlatformLoss,
  type PlatformLoss,
  type RemovedDeposit,
} from '../domain/platform-loss.js';
import type { ReversalReason, Transaction, TransactionStatus } from '../domain/transaction.js';

interface RemovedDepositRow {
  deposit_id: string;
  account_id: string;
  currency: string;
  amount: string;
  fee: string;
  status: TransactionStatus;
  provider_reference: string | null;
  reversals: KeptReversal[];
  created_at: Date;
  removed_at: Date;
}

/** A reversal as removed_deposits.reversals keeps it (amounts as strings, the time as JSON gives it). */
interface KeptReversal {
  id: string;
  reversal_reason: ReversalReason;
  status: TransactionStatus;
  amount: string;
  fee: string;
  payment_id: string | null;
  updated_at: string;
}

export interface PlatformLossRow {
  id: string;
  deposit_id: string;
  reason: LossReason;
  loss_key: string;
  currency: string;
  amount: string;
  fee: string;
  reference: string;
  correlation_id: string;
  created_at: Date;
}

export const toLoss = (row: PlatformLossRow): PlatformLoss => ({
  id: row.id,
  depositId: row.deposit_id,
  reason: row.reason,
  key: row.loss_key,
  currency: row.currency,
  amount: toMinorUnits(row.amount),
  fee: toMinorUnits(row.fee),
  reference: row.reference,
  correlationId: row.correlation_id,
  createdAt: row.created_at,
});

function toRemovedDeposit(row: RemovedDepositRow, losses: PlatformLoss[]): RemovedDeposit {
  const deposit: Transaction = {
    id: row.deposit_id,
    accountId: row.account_id,
    userId: null,
    type: 'deposit',
    status: row.status,
    amount: toMinorUnits(row.amount),
    currency: row.currency,
    fee: toMinorUnits(row.fee),
    counterpartyAccountId: null,
    counterpartyUserId: null,
    exchangeRate: null,
    convertedAmount: null,
    convertedCurrency: null,
    paymentId: null,
    failureReason: null,
    originalTransactionId: null,
    reversalReason: null,
    heldAmount: null,
    metadata: {},
    reference: null,
    createdAt: row.created_at,
    updatedAt: row.removed_at,
    completedAt: null,
  };
  const kept = row.reversals.map((reversal): Transaction => {
    const at = new Date(reversal.updated_at);
    return {
      ...deposit,
      id: reversal.id,
      type: 'reversal',
      status: reversal.status,
      amount: toMinorUnits(reversal.amount),
      fee: toMinorUnits(reversal.fee),
      paymentId: reversal.payment_id,
      originalTransactionId: row.deposit_id,
      reversalReason: reversal.reversal_reason,
      heldAmount: toMinorUnits(0n),
      createdAt: at,
      updatedAt: at,
      completedAt: reversal.status === 'completed' ? at : null,
    };
  });
  return {
    deposit,
    reversals: [...kept, ...losses.map((loss) => lossAsReversal(loss, deposit))],
    providerReference: row.provider_reference,
    removedAt: row.removed_at,
  };
}

/**
 * Keeps what deciding a later refund or dispute of the user's deposits needs, before their transactions go: each
 * deposit, its payment's reference at the provider, and its reversals as they are.
 */
export async function keepRemovedDeposits(trx: Knex.Transaction, userId: string): Promise<void> {
  await trx.raw(
    `INSERT INTO removed_deposits
       (deposit_id, account_id, currency, amount, fee, status, provider_reference, reversals, created_at)
     SELECT d.id, d.account_id, d.currency, d.amount, d.fee, d.status,
            (SELECT p.reference FROM provider_payments p WHERE p.transaction_id = d.id),
            coalesce((
              SELECT jsonb_agg(jsonb_build_object(
                       'id', r.id, 'reversal_reason', r.reversal_reason, 'status', r.status,
                       'amount', r.amount::text, 'fee', r.fee::text, 'payment_id', r.payment_id,
                       'updated_at', r.updated_at) ORDER BY r.id)
              FROM transactions r WHERE r.original_transaction_id = d.id AND r.type = 'reversal'
            ), '[]'::jsonb),
            d.created_at
     FROM transactions d WHERE d.user_id = ? AND d.type = 'deposit'
     ON CONFLICT (deposit_id) DO NOTHING`,
    [userId],
  );
}

/** The deposits among `depositIds` that were removed with their users, with the losses booked on each. */
export async function findRemovedDeposits(
  knex: Knex,
  depositIds: string[],
): Promise<Map<string, RemovedDeposit>> {
  const found = new Map<string, RemovedDeposit>();
  if (depositIds.length === 0) return found;
  // One after the other: `knex` may be a database transaction, one connection.
  const rows: RemovedDepositRow[] = await knex('removed_deposits')
    .whereRaw('deposit_id = ANY(?::uuid[])', [depositIds])
    .select('*');
  if (rows.length === 0) return found;
  const losses: PlatformLossRow[] = await knex('platform_losses')
    .whereRaw('deposit_id = ANY(?::uuid[])', [rows.map((row) => row.deposit_id)])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('*');
  for (const row of rows) {
    const own = losses.filter((loss) => loss.deposit_id === row.deposit_id).map(toLoss);
    found.set(row.deposit_id, toRemovedDeposit(row, own));
  }
  return found;
}

/** Books a loss once: null when one with its key was booked for the deposit already. */
export async function insertPlatformLoss(
  trx: Knex.Transaction,
  loss: NewPlatformLoss,
): Promise<PlatformLoss | null> {
  const rows: PlatformLossRow[] = await trx
    .raw(
      `INSERT INTO platform_losses
       (id, deposit_id, reason, loss_key, currency, amount, fee, reference, correlation_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (deposit_id, loss_key) DO NOTHING
     RETURNING *`,
      [
        loss.id,
        loss.depositId,
        loss.reason,
        loss.key,
        loss.currency,
        loss.amount.toString(),
        loss.fee.toString(),
        loss.reference,
        loss.correlationId,
      ],
    )
    .then((result: { rows: PlatformLossRow[] }) => result.rows);
  return rows[0] ? toLoss(rows[0]) : null;
}
