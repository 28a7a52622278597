import { TRANSACTION_TYPES } from '@payments/contracts';
import type { Metrics } from '@payments/service-kit';

export interface PendingTransactionStore {
  /** Transactions still pending, by type. */
  countPendingByType(): Promise<ReadonlyMap<string, number>>;
  /** Age in seconds of the oldest pending transaction (0 when none is). */
  oldestPendingSeconds(): Promise<number>;
}

/** What an operator opens first in an outage: how many money requests wait, and for how long. */
export function exportPendingTransactions(options: {
  store: PendingTransactionStore;
  metrics: Metrics;
}): void {
  const { store, metrics } = options;
  metrics.labelledGauge(
    'ledger_transactions_pending',
    'Money requests accepted and not yet completed, failed or canceled, by type',
    'type',
    TRANSACTION_TYPES,
    () => store.countPendingByType(),
  );
  metrics.gauge(
    'ledger_oldest_pending_transaction_seconds',
    'Age in seconds of the oldest pending transaction (0 when none is)',
    () => store.oldestPendingSeconds(),
  );
}
