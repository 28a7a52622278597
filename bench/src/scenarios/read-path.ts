import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { runHttpLoad } from '../harness/http-load.js';
import { createLatencySamples, type LatencySamples, type LatencySummary } from '../harness/load.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

export interface ReadPathSide {
  requestsPerSecond: number;
  requests: number;
  errors: number;
  latency: LatencySummary | null;
  cpu: CpuUsage | null;
}

export interface ReadPathResult {
  gateway: ReadPathSide;
  direct: ReadPathSide;
  rounds: number;
}

const WARM_UP_SECONDS = 2;

interface Tally {
  samples: LatencySamples;
  requests: number;
  errors: number;
  seconds: number;
  cpu: CpuUsage | null;
}

function addCpu(total: CpuUsage | null, more: CpuUsage | null): CpuUsage | null {
  if (!more) return total;
  if (!total) return more;
  const sum = (a: Map<string, number>, b: Map<string, number>) => {
    const both = new Map(a);
    for (const [label, ms] of b) both.set(label, (both.get(label) ?? 0) + ms);
    return both;
  };
  return {
    byLabel: sum(total.byLabel, more.byLabel),
    kernelByLabel: sum(total.kernelByLabel, more.kernelByLabel),
    machineBusyMs: total.machineBusyMs + more.machineBusyMs,
    intervalMs: total.intervalMs + more.intervalMs,
  };
}

/**
 * The same authenticated balance read straight to the ledger and through the gateway, in alternating rounds so
 * both see the same background load on a shared machine.
 */
export async function runReadPath(
  context: BenchContext,
  connections: number,
  rounds: number,
): Promise<ReadPathResult> {
  const { db, target, seconds } = context;
  const user = await signUp(target.gatewayUrl, 'reader');
  const { id: accountId } = await user.client.accounts.open({ currency: 'USD' });
  await db.fundAccounts([accountId], 12_345n);
  // Raw (autocannon): the measured reads; the client's per-call work in this process would distort them.
  const headers = { authorization: `Bearer ${user.token}`, accept: 'application/json' };
  const load = (baseUrl: string, runSeconds: number, samples?: LatencySamples) =>
    runHttpLoad({
      url: `${baseUrl}/account/${accountId}/balance`,
      headers,
      connections,
      seconds: runSeconds,
      samples,
    });
  await load(target.ledgerUrl, WARM_UP_SECONDS);
  await load(target.gatewayUrl, WARM_UP_SECONDS);
  const tally = (): Tally => ({
    samples: createLatencySamples(),
    requests: 0,
    errors: 0,
    seconds: 0,
    cpu: null,
  });
  const direct = tally();
  const gateway = tally();
  const measure = async (baseUrl: string, into: Tally) => {
    const before = await context.sampleCpu();
    const result = await load(baseUrl, Math.max(1, Math.round(seconds / rounds)), into.samples);
    into.cpu = addCpu(into.cpu, cpuBetween(before, await context.sampleCpu()));
    into.requests += result.requests;
    into.errors += result.errors;
    into.seconds += result.seconds;
  };
  for (let round = 0; round < rounds; round += 1) {
    await measure(target.ledgerUrl, direct);
    await measure(target.gatewayUrl, gateway);
  }
  const side = (t: Tally): ReadPathSide => ({
    requestsPerSecond: t.requests / t.seconds,
    requests: t.requests,
    errors: t.errors,
    latency: t.samples.summary(),
    cpu: t.cpu,
  });
  return { gateway: side(gateway), direct: side(direct), rounds };
}
