import type { Logger } from '../logger.js';
import { startPoller } from '../poller.js';

/** How often a process prunes what is past its retention; also once as it starts. */
export const RETENTION_INTERVAL_MS = 3600_000;

/** Rows deleted per statement: each statement's locks last milliseconds, whatever is due. */
export const RETENTION_BATCH = 1000;

export interface RetentionOptions {
  /** What is pruned, for the logs (`processed events`). */
  what: string;
  /** Deletes at most `limit` rows past their retention, in one statement; resolves with how many it deleted. */
  pruneBatch(limit: number): Promise<number>;
  logger: Logger;
  intervalMs?: number;
}

export interface Retention {
  /** One pass now (or the one under way); resolves with how many rows it deleted. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Deletes what is past its retention, a batch per statement until a batch comes back short, on a poller: once at
 * start, then every `intervalMs`. Processes pruning at once only share the work.
 */
export function startRetention(options: RetentionOptions): Retention {
  const { what, pruneBatch, logger } = options;
  const intervalMs = options.intervalMs ?? RETENTION_INTERVAL_MS;
  let stopped = false;
  let running: Promise<number> | null = null;
  let failedPasses = 0;

  const pass = async (): Promise<number> => {
    let pruned = 0;
    let batch = RETENTION_BATCH;
    while (!stopped && batch === RETENTION_BATCH) {
      batch = await pruneBatch(RETENTION_BATCH);
      pruned += batch;
    }
    if (pruned > 0) logger.info({ pruned }, `pruned ${what} past their retention`);
    return pruned;
  };

  const runOnce = () => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };

  const poller = startPoller({
    intervalMs,
    idleMaxMs: intervalMs,
    task: async () => {
      await runOnce();
      failedPasses = 0;
      // Never "found work": the next pass comes an interval later either way.
      return false;
    },
    onError: (error) => {
      failedPasses += 1;
      if (failedPasses === 1 || failedPasses % 24 === 0)
        logger.warn({ err: error, failedPasses }, `could not prune ${what}; will retry`);
    },
  });
  poller.wake();

  return {
    runOnce,
    async stop() {
      stopped = true;
      await poller.stop();
      await running?.catch(() => undefined);
    },
  };
}
