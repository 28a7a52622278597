export interface PollerOptions {
  /** How soon the next run follows one that found work (or failed), or one asked for by `wake()`. */
  intervalMs: number;
  /**
   * While runs find nothing to do, the wait between them doubles from `intervalMs` up to this (by default five
   * intervals): an idle process wakes a few times a minute instead of every interval (on a small machine each
   * wake-up costs milliseconds).
   */
  idleMaxMs?: number;
  /** One run; resolves whether it found work. A run that throws counts as one that found work. */
  task: () => Promise<boolean>;
  onError: (error: unknown) => void;
}

export interface Poller {
  /** A run now, or again right after the one under way; the pace is back to `intervalMs`. */
  wake(): void;
  /**
   * A run no later than `at` (ms since the epoch), however long the idle wait: for work known to come due then
   * (a retry scheduled by this process). Each time asked for is served by the first run that starts at or after it.
   */
  wakeAt(at: number): void;
  /** No more runs; resolves once the one under way has ended. */
  stop(): Promise<void>;
}

/** Times asked for by `wakeAt` kept at most; past that the latest are left to the idle pace to find. */
const MAX_ASKED = 10_000;

/**
 * Runs `task` again and again, never two at once: soon after a run that found work, ever more rarely while runs
 * find nothing, at once when woken, and by any time a caller asked for. The first run comes after `intervalMs`;
 * call `wake()` for one at start.
 */
export function startPoller(options: PollerOptions): Poller {
  const { intervalMs, task, onError } = options;
  const idleMaxMs = Math.max(intervalMs, options.idleMaxMs ?? intervalMs * 5);
  /** Ascending. */
  const asked: number[] = [];
  let delayMs = intervalMs;
  let pollAt = Date.now() + intervalMs;
  let stopped = false;
  let again = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;

  const arm = () => {
    clearTimeout(timer);
    if (stopped || running) return;
    const at = Math.min(pollAt, asked[0] ?? Infinity);
    timer = setTimeout(() => run(at), Math.max(0, at - Date.now()));
    timer.unref();
  };

  /** `due`: the time the timer that started these runs was set for. */
  const runs = async (due: number) => {
    let worked = false;
    do {
      again = false;
      // Node's timers may fire a millisecond before Date.now() reaches the time they were set for: what they were
      // set for is served all the same, or it would bring a second run right behind this one.
      const now = Math.max(Date.now(), due);
      due = 0;
      let served = 0;
      while (served < asked.length && asked[served]! <= now) served += 1;
      asked.splice(0, served);
      try {
        if (await task()) worked = true;
      } catch (error) {
        worked = true;
        onError(error);
      }
    } while (again && !stopped);
    delayMs = worked ? intervalMs : Math.min(delayMs * 2, idleMaxMs);
  };

  function run(due = 0) {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = runs(due).finally(() => {
      running = null;
      pollAt = Date.now() + delayMs;
      arm();
    });
  }

  arm();

  return {
    wake() {
      delayMs = intervalMs;
      run();
    },
    wakeAt(at) {
      if (stopped) return;
      let low = 0;
      let high = asked.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (asked[middle]! <= at) low = middle + 1;
        else high = middle;
      }
      asked.splice(low, 0, at);
      if (asked.length > MAX_ASKED) asked.pop();
      arm();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
