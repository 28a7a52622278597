import type { PaymentsApi } from '../harness/api.js';
import type { CpuSnapshot } from '../harness/cpu-accounting.js';
import type { LedgerDatabase } from '../harness/ledger-db.js';
import type { Target } from '../harness/target.js';

/** What every scenario gets: the running system, a client for setting it up, and its ledger database. */
export interface BenchContext {
  target: Target;
  api: PaymentsApi;
  db: LedgerDatabase;
  /** How long each measured run lasts. */
  seconds: number;
  log(message: string): void;
  /** CPU used so far by each process of the system (null where it cannot be read); diff two with cpuBetween. */
  sampleCpu(): Promise<CpuSnapshot | null>;
}
