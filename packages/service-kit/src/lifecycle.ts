import { ConfigError } from './config.js';
import { createLogger, type Logger } from './logger.js';

export interface Shutdown {
  /** Registers a step; steps run in reverse order of registration (last opened, first closed). */
  add(name: string, step: () => Promise<unknown> | unknown): void;
  /**
   * Stops: for `drainMs` the process keeps serving while `/ready` answers 503 (so a load balancer stops sending it
   * requests), then the steps run. A start that failed part-way runs with no drain.
   */
  run(options?: { drainMs?: number }): Promise<void>;
  /** True from the moment `run` is called: `/ready` answers 503 from then on. */
  isStopping(): boolean;
}

export function createShutdown(logger: Logger, stepTimeoutMs = 10_000): Shutdown {
  const steps: { name: string; step: () => Promise<unknown> | unknown }[] = [];
  let running: Promise<void> | null = null;
  return {
    add(name, step) {
      steps.push({ name, step });
    },
    isStopping: () => running !== null,
    run({ drainMs = 0 } = {}) {
      running ??= (async () => {
        if (drainMs > 0) {
          logger.info({ drain_ms: drainMs }, 'draining: not ready, still serving');
          await new Promise((resolve) => setTimeout(resolve, drainMs));
        }
        for (const { name, step } of steps.reverse()) {
          const timeout = new Promise((resolve) => setTimeout(resolve, stepTimeoutMs, 'timeout').unref());
          const outcome = await Promise.race([Promise.resolve().then(step), timeout]).catch(
            (error: unknown) => {
              logger.error({ err: error, step: name }, 'shutdown step failed');
            },
          );
          if (outcome === 'timeout') logger.warn({ step: name }, 'shutdown step timed out');
        }
      })();
      return running;
    },
  };
}

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The one place a process starts, stops on SIGINT/SIGTERM (drain, then exit 0) and dies on fatal errors.
 * A bad configuration prints its message alone and exits 1.
 */
export function runMain(name: string, start: () => Promise<Stoppable>): void {
  const logger = createLogger(name);
  let service: Stoppable | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await service?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // Started by a launcher over an IPC channel (pnpm start's processes mode): a launcher that dies without stopping
  // us (SIGKILL, the OOM killer) closes the channel, and we stop too rather than hold our port for the next start.
  if (process.channel) {
    process.channel.unref();
    process.on('disconnect', () => void stop('launcher gone'));
  }
  process.on('unhandledRejection', (error) => {
    logger.fatal({ err: error }, 'unhandled rejection');
    process.exit(1);
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  start().then(
    (running) => {
      service = running;
    },
    (error: unknown) => {
      if (error instanceof ConfigError) console.error(`${name}: ${error.message}`);
      else logger.fatal({ err: error }, 'failed to start');
      process.exit(1);
    },
  );
}
