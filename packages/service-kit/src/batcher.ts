import { setTimeout as sleep } from 'node:timers/promises';

export interface BatcherOptions {
  /** The most items one run takes; the rest wait for the next. */
  maxSize: number;
  /**
   * Under load, let a small run wait for company: when a run would start within `ms` of the previous one's end
   * with fewer than `below` items, it first waits `ms`, and takes what arrived meanwhile. A run's fixed cost (a
   * database transaction's round trips and commit) dominates one of a few items. An item that arrives when
   * nothing ran for `ms` (light load) never waits.
   */
  gather?: { below: number; ms: number };
}

export interface Batcher<T, R> {
  /** Resolves with this item's result once a run that took it has finished; rejects if that run failed for it. */
  submit(item: T): Promise<R>;
}

interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted while a run is in progress (or in the same turn of the event loop) are run
 * together by one call of `run`, which returns one result per item, in order. One run at a time, so a run
 * takes everything that queued up behind the previous one: under light load a run holds one item and adds no
 * delay; under heavy load runs grow up to `maxSize` and the fixed cost of a run is shared.
 *
 * A run that throws is split: each of its items is run again alone, so one bad item fails only its own caller.
 */
export function createBatcher<T, R>(
  run: (items: T[]) => Promise<R[]>,
  options: BatcherOptions,
): Batcher<T, R> {
  const queue: Pending<T, R>[] = [];
  let running: Promise<void> | null = null;

  const runAlone = async (pending: Pending<T, R>) => {
    try {
      const [result] = await run([pending.item]);
      pending.resolve(result as R);
    } catch (error) {
      pending.reject(error);
    }
  };

  const runBatch = async (batch: Pending<T, R>[]) => {
    let results: R[];
    try {
      results = await run(batch.map((pending) => pending.item));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      for (const pending of batch) await runAlone(pending);
      return;
    }
    if (results.length !== batch.length) {
      const error = new Error(`a batch of ${batch.length} returned ${results.length} results`);
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => pending.resolve(results[index] as R));
  };

  const { gather } = options;
  let lastRunEnded = -Infinity;
  const loop = async () => {
    // Let the deliveries of this turn of the event loop join the first run.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      if (gather && queue.length < gather.below && performance.now() - lastRunEnded < gather.ms) {
        await sleep(gather.ms);
      }
      await runBatch(queue.splice(0, options.maxSize));
      lastRunEnded = performance.now();
    }
  };

  const start = () => {
    running ??= loop().finally(() => {
      running = null;
      if (queue.length > 0) start();
    });
  };

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        start();
      });
    },
  };
}
