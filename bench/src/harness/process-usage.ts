import { readdir, readFile } from 'node:fs/promises';
import type { ProcessLabeler } from './cpu-accounting.js';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** One labelled process tree at one moment: CPU used so far and memory held now, from /proc (Linux). */
export interface ProcessSample {
  label: string;
  /** utime + stime of the process and its live descendants, plus cutime + cstime (children already reaped). */
  cpuMs: number;
  /** Resident set (VmRSS) and proportional set (Pss, shared pages divided among their users), in KiB. */
  rssKiB: number;
  pssKiB: number;
  processes: number;
}

export interface UsageSnapshot {
  at: number;
  byPid: Map<number, ProcessSample>;
}

interface ProcEntry {
  pid: number;
  ppid: number;
  cpuMs: number;
  childrenCpuMs: number;
  cmdline: string;
  env: string;
}

async function readEntry(pid: number): Promise<ProcEntry | null> {
  try {
    const [cmdline, env, stat] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
      readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    // Fields after the parenthesised command name: ppid is the 2nd, utime/stime the 12th/13th, cutime/cstime
    // the 14th/15th.
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const at = (index: number) => fields[index] ?? 0;
    return {
      pid,
      ppid: at(1),
      cpuMs: (at(11) + at(12)) * TICK_MS,
      childrenCpuMs: (at(13) + at(14)) * TICK_MS,
      cmdline: cmdline.replaceAll('\0', ' ').trim(),
      env,
    };
  } catch {
    return null; // The process ended while we looked.
  }
}

/** VmRSS from status and Pss from smaps_rollup, in KiB (0 where the kernel does not say). */
async function readMemoryKiB(pid: number): Promise<{ rssKiB: number; pssKiB: number }> {
  const field = (text: string, name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  const [status, rollup] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''),
    readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => ''),
  ]);
  return { rssKiB: field(status, 'VmRSS'), pssKiB: field(rollup, 'Pss') };
}

/**
 * Every process the labeler names, each with its descendants (a service's child processes count as the
 * service's): CPU so far and memory now. Keyed by the labelled process's pid, so two snapshots can be diffed.
 */
export async function snapshotUsage(labeler: ProcessLabeler): Promise<UsageSnapshot> {
  const entries = new Map<number, ProcEntry>();
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const entry = await readEntry(pid);
    if (entry) entries.set(pid, entry);
  }
  const labels = new Map<number, string>();
  for (const entry of entries.values()) {
    const label = labeler({ pid: entry.pid, cmdline: entry.cmdline, env: entry.env });
    if (label) labels.set(entry.pid, label);
  }
  /** The nearest labelled ancestor (or the process itself). */
  const rootOf = (pid: number): number | null => {
    for (let current: number | undefined = pid, depth = 0; current && depth < 64; depth += 1) {
      if (labels.has(current)) return current;
      current = entries.get(current)?.ppid;
    }
    return null;
  };
  const byPid = new Map<number, ProcessSample>();
  for (const entry of entries.values()) {
    const root = rootOf(entry.pid);
    if (root === null) continue;
    const memory = await readMemoryKiB(entry.pid);
    const sample = byPid.get(root) ?? {
      label: labels.get(root) as string,
      cpuMs: 0,
      rssKiB: 0,
      pssKiB: 0,
      processes: 0,
    };
    sample.cpuMs += entry.cpuMs + entry.childrenCpuMs;
    sample.rssKiB += memory.rssKiB;
    sample.pssKiB += memory.pssKiB;
    sample.processes += 1;
    byPid.set(root, sample);
  }
  return { at: Date.now(), byPid };
}

export interface LabelUsage {
  label: string;
  cpuMs: number;
  /** CPU over the interval as a share of one core. */
  coreShare: number;
  rssKiB: number;
  pssKiB: number;
  processes: number;
}

/**
 * CPU per label between two snapshots (processes that started in between count from zero, ones that ended are
 * lost), memory as of the second.
 */
export function usageBetween(before: UsageSnapshot, after: UsageSnapshot): LabelUsage[] {
  const intervalMs = after.at - before.at;
  const byLabel = new Map<string, LabelUsage>();
  for (const [pid, sample] of after.byPid) {
    const used = sample.cpuMs - (before.byPid.get(pid)?.cpuMs ?? 0);
    const usage = byLabel.get(sample.label) ?? {
      label: sample.label,
      cpuMs: 0,
      coreShare: 0,
      rssKiB: 0,
      pssKiB: 0,
      processes: 0,
    };
    usage.cpuMs += used;
    usage.coreShare = usage.cpuMs / intervalMs;
    usage.rssKiB += sample.rssKiB;
    usage.pssKiB += sample.pssKiB;
    usage.processes += sample.processes;
    byLabel.set(sample.label, usage);
  }
  return [...byLabel.values()];
}
