import type { CpuUsage } from './cpu-accounting.js';

export interface CpuPerOperation {
  /** CPU ms each process spent per operation, largest first, and the kernel's part of it. */
  perOperationMs: { process: string; ms: number; kernelMs: number }[];
  /** Sum over the system's processes (the load generator excluded), ms per operation. */
  systemMsPerOperation: number;
  /** Of that sum, the part spent in the kernel (system calls, the loopback network stack, scheduling). */
  systemKernelMsPerOperation: number;
  /** Share of the machine's busy time used by processes outside the system and the bench (other users). */
  othersShare: number;
  /** Busy share of the machine's cores over the interval. */
  machineBusyShare: number;
}

const LOAD_GENERATOR = 'bench (load generator)';

/** Turns CPU used over an interval into per-operation figures. */
export function cpuPerOperation(
  usage: CpuUsage | null,
  operations: number,
  cores: number,
): CpuPerOperation | null {
  if (!usage || operations === 0) return null;
  const entries = [...usage.byLabel].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
  const labelled = entries.reduce((sum, [, ms]) => sum + ms, 0);
  const ofSystem = (byLabel: Map<string, number>) =>
    [...byLabel]
      .filter(([label, ms]) => label !== LOAD_GENERATOR && ms > 0)
      .reduce((sum, [, ms]) => sum + ms, 0);
  return {
    perOperationMs: entries.map(([label, ms]) => ({
      process: label,
      ms: ms / operations,
      kernelMs: (usage.kernelByLabel.get(label) ?? 0) / operations,
    })),
    systemMsPerOperation: ofSystem(usage.byLabel) / operations,
    systemKernelMsPerOperation: ofSystem(usage.kernelByLabel) / operations,
    othersShare:
      usage.machineBusyMs > 0 ? Math.max(0, usage.machineBusyMs - labelled) / usage.machineBusyMs : 0,
    machineBusyShare: usage.machineBusyMs / (usage.intervalMs * cores),
  };
}

/**
 * One line: "ledger 1.93 · webhook-ingest 1.90 · … (system total 7.1, 1.2 of it in the kernel); machine 98% busy,
 * 38% of it other users".
 */
export function describeCpu(cpu: CpuPerOperation | null): string {
  if (!cpu) return 'CPU per operation: not measured';
  const parts = cpu.perOperationMs
    .filter((entry) => entry.ms >= 0.01)
    .map((entry) => `${entry.process} ${entry.ms.toFixed(2)}`);
  return (
    `CPU ms per op: ${parts.join(' · ')} (system total ${cpu.systemMsPerOperation.toFixed(2)}, ` +
    `${cpu.systemKernelMsPerOperation.toFixed(2)} of it in the kernel); ` +
    `machine ${(cpu.machineBusyShare * 100).toFixed(0)}% busy, ${(cpu.othersShare * 100).toFixed(0)}% of it other users`
  );
}

/**
 * The kernel's part of each process's figure (stime: system calls, the loopback network stack, scheduling), e.g.
 * "of it in the kernel, ms per op: ledger 0.05 · rabbitmq 0.04 · …". A V8 profile cannot tell this apart: a
 * process preempted in a system call is sampled in that call.
 */
export function describeKernelCpu(cpu: CpuPerOperation | null): string | null {
  if (!cpu) return null;
  const parts = cpu.perOperationMs
    .filter((entry) => entry.kernelMs >= 0.01)
    .map((entry) => `${entry.process} ${entry.kernelMs.toFixed(2)}`);
  return parts.length > 0 ? `of it in the kernel, ms per op: ${parts.join(' · ')}` : null;
}
