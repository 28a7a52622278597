import { randomUUID } from 'node:crypto';
import { startPoller, type Logger, type OutboxRelay } from '@payments/service-kit';
import { OVERVIEW_LOOKBACK_MS } from '../domain/overview.js';
import { releaseOf } from '../domain/settlement.js';
import type { Transaction } from '../domain/transaction.js';
import { finish, settle, type FlowContext, type SettlementUnit } from './settlement-requests.js';
import type { UnitOfWork } from './unit-of-work.js';

export interface AuditReport {
  ok: boolean;
  checkedAt: Date;
  counts: { accounts: number; transactions: number; entries: number };
  /**
   * The ledger's own accounts: provider clearing, fee revenue, FX, platform loss (and unclaimed funds in older
   * books).
   */
  systemBalances: { code: string; currency: string; balance: bigint }[];
  /** Transactions whose entries do not sum to zero in some currency. */
  unbalancedTransactions: { transactionId: string; currency: string; sum: bigint }[];
  /** Accounts whose balance differs from the sum of their entries. */
  balanceMismatches: { accountId: string; balance: bigint; entries: bigint }[];
  /**
   * User accounts breaking available ≤ balance, or below zero further than reversals took them (or with no
   * completed reversal to explain it).
   */
  invalidBalances: { accountId: string; balance: bigint; availableBalance: bigint }[];
  /** Reported, not a fault: accounts a reversal took below zero (the provider took back money already spent). */
  overdrawnAccounts: { accountId: string; balance: bigint; availableBalance: bigint }[];
  /** User accounts whose held money differs from what their pending withdrawals and transfers hold. */
  holdMismatches: { accountId: string; held: bigint; pending: bigint }[];
  /** Completed transactions without entries, or unfinished ones with entries. */
  misbookedTransactions: { transactionId: string; status: string; entries: number }[];
  /** History counters (behind `pagination.total`) that differ from counting the transactions themselves. */
  historyCountMismatches: HistoryCountMismatch[];
  /**
   * Reported, not a fault: per currency, what the provider took back from removed users' deposits and what the
   * platform lost (that less the fee shares fee revenue gave back), as booked in platform_losses.
   */
  platformLosses: { currency: string; count: number; amount: bigint; loss: bigint }[];
  /**
   * Platform losses whose entries on the platform loss account are not exactly their loss, and entries on that
   * account that no platform loss explains.
   */
  misbookedLosses: { transactionId: string; expected: bigint; entries: bigint }[];
}

export interface HistoryCountMismatch {
  ownerKind: 'user' | 'account';
  ownerId: string;
  direction: 'sent' | 'received';
  type: string;
  status: string;
  counted: number;
  actual: number;
}

/** What expiring holds does in one database transaction, besides ending transactions. */
export interface ExpiryUnit extends SettlementUnit {
  /**
   * Takes back a withdrawal's request to the provider (its WithdrawalRequested) if the outbox relay never published
   * it (an attempt under way is waited for, briefly); true when it was taken back, so the provider can never have
   * seen it.
   */
  recallProviderRequest(transactionId: string): Promise<boolean>;
  /** Marks a pending withdrawal as awaiting reconciliation, once; true when this call marked it. */
  flagForReconciliation(transactionId: string): Promise<boolean>;
}

export interface MaintenanceStore extends UnitOfWork<ExpiryUnit> {
  /**
   * Withdrawals and transfers still holding funds since before `cutoff`, oldest first; those already awaiting
   * reconciliation wait for the provider or an operator, not for a timer.
   */
  expiredHolds(cutoff: Date, limit: number): Promise<string[]>;
  /** Pending deposits accepted before `cutoff`, oldest first: nothing paid them in time. */
  expiredDeposits(cutoff: Date, limit: number): Promise<string[]>;
  deleteIdempotencyKeysBefore(cutoff: Date): Promise<number>;
  /** Forgets the declined payment attempts recorded before `cutoff` (only the overview reads them). */
  deleteAttemptFailuresBefore(cutoff: Date): Promise<number>;
  /** Folds up to `limit` pending history count deltas into the counters; resolves with how many it folded. */
  compactHistoryCounts(limit: number): Promise<number>;
  audit(): Promise<AuditReport>;
}

export interface MaintenanceOptions {
  store: MaintenanceStore;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  holdExpiryMs: number;
  depositExpiryMs: number;
  idempotencyTtlMs: number;
  intervalMs: number;
  now?: () => number;
}

export interface HoldExpiries {
  canceled: number;
  /** Withdrawals the provider may have received: kept pending, awaiting reconciliation. */
  flagged: number;
  /** Deposits nobody paid in time, canceled. */
  expiredDeposits: number;
}

/**
 * Upkeep: holds and deposits that expired, idempotency keys past their retention, declined payment attempts older
 * than the overview reads, the history counters, the audit.
 */
export interface Maintenance {
  /** One pass now; resolves with what it did to expired holds. */
  runOnce(): Promise<HoldExpiries>;
  /**
   * Checks the books: double entry balances, balances match the journal, holds match pending transactions, the
   * history counters match the transactions, and the platform loss accounts hold exactly the losses booked.
   */
  audit(): Promise<AuditReport>;
  stop(): Promise<void>;
}

const BATCH = 100;
const COMPACTION_BATCH = 10_000;
const COMPACTION_INTERVAL_MS = 1_000;
/** While compactions find nothing to fold, the wait between them doubles up to this. */
const COMPACTION_IDLE_MAX_MS = 5_000;

/** Runs `task` every `intervalMs`, never two at once; `run` starts one now or joins the one under way. */
function repeat<T>(intervalMs: number, task: () => Promise<T>, onError: (error: unknown) => void) {
  let running: Promise<T> | null = null;
  const run = () => {
    running ??= task().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    run().catch(onError);
  }, intervalMs);
  timer.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/**
 * Periodic upkeep run by every ledger process (conditional updates make concurrent passes harmless):
 * ends holds past their expiry (see expireHold) and deposits nobody paid in time (expireDeposit), forgets
 * idempotency keys past their retention and declined payment attempts older than the overview reads, and compacts
 * the history counters (one process at a time, the others skip).
 */
export function startMaintenance(options: MaintenanceOptions): Maintenance {
  const { store, outbox, logger } = options;
  const now = options.now ?? Date.now;
  let stopped = false;

  /**
   * Finds what expired before `expiryMs` ago, a batch at a time, and ends each in a database transaction of its own
   * under its correlation `prefix`.
   */
  const sweep = async <T>(
    expiryMs: number,
    find: (cutoff: Date, limit: number) => Promise<string[]>,
    prefix: string,
    end: (unit: ExpiryUnit, id: string, cutoff: Date, context: FlowContext) => Promise<T>,
    counted: (outcome: T) => void,
  ) => {
    const cutoff = new Date(now() - expiryMs);
    for (;;) {
      const ids = await find(cutoff, BATCH);
      for (const id of ids) {
        if (stopped) return;
        const context = { correlationId: `${prefix}:${randomUUID()}`, logger };
        counted(await store.inTransaction((unit) => end(unit, id, cutoff, context)));
      }
      if (ids.length < BATCH) return;
    }
  };

  const pass = async (): Promise<HoldExpiries> => {
    const expiries: HoldExpiries = { canceled: 0, flagged: 0, expiredDeposits: 0 };
    await sweep(options.holdExpiryMs, store.expiredHolds, 'hold-expiry', expireHold, (done) => {
      if (done) expiries[done] += 1;
    });
    await sweep(options.depositExpiryMs, store.expiredDeposits, 'deposit-expiry', expireDeposit, (done) => {
      if (done) expiries.expiredDeposits += 1;
    });
    if (expiries.canceled > 0) logger.info({ canceled: expiries.canceled }, 'canceled expired holds');
    if (expiries.expiredDeposits > 0)
      logger.info({ canceled: expiries.expiredDeposits }, 'canceled unpaid deposits');
    if (expiries.canceled + expiries.expiredDeposits > 0) outbox.wake();
    await store.deleteIdempotencyKeysBefore(new Date(now() - options.idempotencyTtlMs));
    await store.deleteAttemptFailuresBefore(new Date(now() - OVERVIEW_LOOKBACK_MS));
    return expiries;
  };

  // A full batch means more may be waiting: keep folding, one bounded transaction at a time.
  // Whether it folded anything: an idle ledger compacts every few seconds, a busy one every second.
  const compactHistoryCounts = async () => {
    let moved = COMPACTION_BATCH;
    let folded = 0;
    while (!stopped && moved === COMPACTION_BATCH) {
      moved = await store.compactHistoryCounts(COMPACTION_BATCH);
      folded += moved;
    }
    return folded > 0;
  };

  const upkeep = repeat(options.intervalMs, pass, (error) =>
    logger.warn({ err: error }, 'ledger maintenance pass failed'),
  );
  const compaction = startPoller({
    intervalMs: COMPACTION_INTERVAL_MS,
    idleMaxMs: COMPACTION_IDLE_MAX_MS,
    task: compactHistoryCounts,
    onError: (error) => logger.warn({ err: error }, 'history count compaction failed'),
  });

  return {
    runOnce: upkeep.run,
    audit: () => store.audit(),
    async stop() {
      stopped = true;
      await Promise.all([upkeep.stop(), compaction.stop()]);
    },
  };
}

/** What an expired hold came to: canceled and released, or (a withdrawal) flagged for reconciliation. */
export type HoldExpiry = 'canceled' | 'flagged' | null;

/**
 * A withdrawal or transfer that held funds past its expiry. A transfer (settled by the ledger itself) is canceled
 * and its hold released. A withdrawal is canceled only if its request never left the ledger: its outbox row is
 * taken back in this same database transaction. One the provider may have received keeps its hold, stays pending
 * and is flagged for reconciliation, so a late payout.paid or payout.failed still settles it, once.
 */
export async function expireHold(
  unit: ExpiryUnit,
  transactionId: string,
  cutoff: Date,
  context: FlowContext,
): Promise<HoldExpiry> {
  const held = (await unit.lockTransactions([transactionId])).get(transactionId);
  if (!held || held.status !== 'pending' || held.type === 'deposit' || held.createdAt >= cutoff) return null;
  if (held.type === 'withdrawal' && !(await unit.recallProviderRequest(held.id))) {
    if (!(await unit.flagForReconciliation(held.id))) return null;
    context.logger.warn(
      { transaction_id: held.id, account_id: held.accountId, amount: held.amount.toString() },
      'a withdrawal handed to the provider got no confirmation in time; it keeps its hold and awaits reconciliation',
    );
    return 'flagged';
  }
  const [canceled] = await settle(unit, [
    {
      transactionId,
      decide(transaction) {
        if (transaction?.status !== 'pending') return null;
        const reason = 'No confirmation arrived in time; the hold expired';
        return finish(transaction, 'canceled', releaseOf(transaction), context, reason);
      },
    },
  ]);
  return canceled ? 'canceled' : null;
}

/**
 * A deposit nobody paid in time ends canceled (it moved no money), and its payment is canceled at the provider.
 * Should the provider capture that payment all the same, it is credited as a late payment (see creditReturnedMoney).
 * Null when it was no longer pending.
 */
export async function expireDeposit(
  unit: ExpiryUnit,
  transactionId: string,
  cutoff: Date,
  context: FlowContext,
): Promise<Transaction | null> {
  const [canceled] = await settle(unit, [
    {
      transactionId,
      decide(transaction) {
        if (transaction?.type !== 'deposit' || transaction.status !== 'pending') return null;
        if (transaction.createdAt >= cutoff) return null;
        const reason = 'No payment arrived in time; the deposit expired';
        return finish(transaction, 'canceled', releaseOf(transaction), context, reason);
      },
    },
  ]);
  // Its payment, if the provider made one, is canceled there too, so nobody pays a deposit that ended.
  if (canceled) await unit.requestProviderUndo([canceled.id]);
  return canceled ?? null;
}
