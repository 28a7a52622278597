export { runHttpLoad, type HttpLoadOptions, type HttpLoadResult } from './harness/http-load.js';
export { cpuBetween, snapshotCpu, systemLabeler, type CpuUsage } from './harness/cpu-accounting.js';
export { findPgbench, runPgbench, type PgbenchWorkload } from './harness/pgbench.js';
