/** A set of latency samples in milliseconds. */
export interface LatencySamples {
  add(ms: number): void;
  count(): number;
  summary(): LatencySummary | null;
}

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function createLatencySamples(): LatencySamples {
  const samples: number[] = [];
  return {
    add: (ms) => void samples.push(ms),
    count: () => samples.length,
    summary: () => summarize(samples),
  };
}

export function summarize(values: readonly number[]): LatencySummary | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: at(1), mean: total / sorted.length };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `workers` loops calling `step` back to back until the time is up or a step returns false (nothing left to do).
 * Resolves with the elapsed milliseconds, from the first call to the last answer.
 */
export async function runClosedLoop(
  workers: number,
  durationMs: number,
  step: (worker: number) => Promise<boolean | void>,
): Promise<number> {
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (performance.now() < deadline) {
        if ((await step(worker)) === false) return;
      }
    }),
  );
  return performance.now() - started;
}

/**
 * Starts `fire` at a fixed rate regardless of how long each takes (an open loop, as a provider sends), for
 * `durationMs` or `count` calls, whichever ends first, and waits for every call to settle. Resolves with how
 * many were started.
 */
export async function runPaced(
  ratePerSecond: number,
  durationMs: number,
  fire: (index: number) => Promise<void>,
  count = Infinity,
): Promise<number> {
  const interval = 1000 / ratePerSecond;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let index = 0;
  while (index < count && performance.now() - started < durationMs) {
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const call = fire(index).finally(() => inFlight.delete(call));
    inFlight.add(call);
    index += 1;
  }
  await Promise.all(inFlight);
  return index;
}

/** Work handed in one item at a time (e.g. as events arrive), done by at most `concurrency` at once, in order. */
export interface WorkPool<T> {
  push(item: T): void;
  /** Items waiting or in progress. */
  size(): number;
  /** Resolves once nothing is waiting or in progress. */
  drained(): Promise<void>;
}

export function createWorkPool<T>(concurrency: number, work: (item: T) => Promise<void>): WorkPool<T> {
  const waiting: T[] = [];
  let head = 0;
  let running = 0;
  const onDrained: (() => void)[] = [];
  const next = () => {
    while (running < concurrency && head < waiting.length) {
      const item = waiting[head] as T;
      head += 1;
      running += 1;
      void work(item)
        .catch(() => undefined)
        .finally(() => {
          running -= 1;
          next();
        });
    }
    if (head === waiting.length) {
      waiting.length = 0;
      head = 0;
      if (running === 0) for (const resolve of onDrained.splice(0)) resolve();
    }
  };
  return {
    push(item) {
      waiting.push(item);
      next();
    },
    size: () => waiting.length - head + running,
    drained: () =>
      running === 0 && head === waiting.length
        ? Promise.resolve()
        : new Promise((resolve) => onDrained.push(resolve)),
  };
}
