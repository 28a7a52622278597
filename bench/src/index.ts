export { runHttpLoad, type HttpLoadOptions, type HttpLoadResult } from './harness/http-load.js';
export { cpuBetween, snapshotCpu, systemLabeler, type CpuUsage } from './harness/cpu-accounting.js';
export { findPgbench, runPgbench, type PgbenchWorkload } from './harness/pgbench.js';
export {
  checkAdversarialBooks,
  runAdversarialDrill,
  startAdversarialSystem,
  type AdversarialRecord,
} from './drills/adversarial-drill.js';
export * from './drills/adversarial-checks.js';
export { createValuation, referenceValuation, type Valuation } from './drills/valuation.js';
export { discrepanciesOf, type DrillReport } from './drills/drill-context.js';
