import type { CpuSnapshot } from '../harness/cpu-accounting.js';
import type { LedgerDatabase } from '../harness/ledger-db.js';
import type { Target } from '../harness/target.js';

/**
 * What every scenario gets: the running system and its ledger database. Scenarios set themselves up through the
 * typed client (harness/users.ts: `signUp`) and send their measured load raw (harness/http-client.ts, autocannon).
 */
export interface BenchContext {
  target: Target;
  db: LedgerDatabase;
  /** How long each measured run lasts. */
  seconds: number;
  log(message: string): void;
  /** CPU used so far by each process of the system (null where it cannot be read); diff two with cpuBetween. */
  sampleCpu(): Promise<CpuSnapshot | null>;
}
