import { compileSchema, TokenRevokedData } from '@payments/contracts';
import { createRevocationList, type RevocationList } from './auth.js';
import type { EventBus } from './bus/event-bus.js';
import type { Shutdown } from './lifecycle.js';
import type { Logger } from './logger.js';
import { serviceAuthorization } from './service-credential.js';

const checkRevocation = compileSchema(TokenRevokedData);

/**
 * Revocations in force, from identity's internal endpoint (`{ data: [...] }` or a bare array of TokenRevoked
 * data), added to `revocations`. One attempt: throws when identity cannot answer.
 */
export async function loadRevocations(
  identityUrl: string,
  revocations: RevocationList,
  logger: Logger,
  serviceToken: string,
): Promise<number> {
  const response = await fetch(new URL('/internal/revocations', identityUrl), {
    headers: serviceAuthorization(serviceToken),
    signal: AbortSignal.timeout(2000),
  });
  if (!response.ok) throw new Error(`identity answered ${response.status}`);
  const body = (await response.json()) as unknown;
  const items = Array.isArray(body) ? body : ((body as { data?: unknown } | null)?.data ?? []);
  let loaded = 0;
  for (const item of Array.isArray(items) ? items : []) {
    const checked = checkRevocation(item);
    if (!checked.ok) continue;
    revocations.add(checked.value);
    loaded += 1;
  }
  logger.debug({ loaded }, 'loaded the revocations in force');
  return loaded;
}

export interface RevocationSync {
  /** True once a load has succeeded: until then the denylist may lack revocations made before this process. */
  isLoaded(): boolean;
  /** Loads again (after the broadcast subscription was re-made, when events may have been missed). */
  reload(): void;
  /** Resolves after the first attempt, whether it succeeded or not (the retries go on in the background). */
  firstAttempt: Promise<void>;
  stop(): void;
}

export interface RevocationSyncOptions {
  /** One attempt at loading, e.g. `() => loadRevocations(url, list, logger)`. */
  load: () => Promise<unknown>;
  logger: Logger;
  /** Also reload this often (ms): for a process that hears no TokenRevoked events. */
  reloadEveryMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
}

/**
 * Keeps a process's denylist complete: loads at start, retrying with backoff until it succeeds, and again on
 * every `reload()`. A reload asked for while a load is running runs once more after it, so a load that began
 * before a new subscription was bound cannot stand in for one that began after.
 */
export function startRevocationSync(options: RevocationSyncOptions): RevocationSync {
  const { logger } = options;
  const retryMinMs = options.retryMinMs ?? 200;
  const retryMaxMs = options.retryMaxMs ?? 2000;
  let loaded = false;
  let stopped = false;
  let wanted = true;
  let running: Promise<void> | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let wakeRetry: (() => void) | null = null;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeRetry = resolve;
      retryTimer = setTimeout(resolve, ms);
    }).finally(() => {
      wakeRetry = null;
      retryTimer = null;
    });

  let resolveFirst: () => void = () => undefined;
  const firstAttempt = new Promise<void>((resolve) => (resolveFirst = resolve));

  const attemptUntilLoaded = async () => {
    for (let failures = 0; !stopped; failures++) {
      try {
        await options.load();
        loaded = true;
        return;
      } catch (error) {
        if (failures === 0 || failures % 25 === 0) {
          logger.warn({ err: error }, 'cannot load the revocations in force from identity; retrying');
        }
      } finally {
        resolveFirst();
      }
      await pause(Math.min(retryMinMs * 2 ** Math.min(failures, 10), retryMaxMs));
    }
  };

  const run = () => {
    running ??= (async () => {
      while (wanted && !stopped) {
        wanted = false;
        await attemptUntilLoaded();
      }
    })().finally(() => {
      running = null;
      // A reload asked for between the loop's last look and here.
      if (wanted && !stopped) run();
    });
  };
  run();

  const periodic = options.reloadEveryMs
    ? setInterval(() => sync.reload(), options.reloadEveryMs).unref()
    : null;

  const sync: RevocationSync = {
    isLoaded: () => loaded,
    reload() {
      if (stopped) return;
      wanted = true;
      // A retry waiting out its backoff starts at once: the reason to load again may be that identity is back.
      wakeRetry?.();
      run();
    },
    firstAttempt,
    stop() {
      stopped = true;
      if (periodic) clearInterval(periodic);
      if (retryTimer) clearTimeout(retryTimer);
      wakeRetry?.();
    },
  };
  return sync;
}

export interface FollowRevocationsOptions {
  identityUrl: string;
  serviceToken: string;
  logger: Logger;
  shutdown: Shutdown;
  /** The TokenRevoked broadcast; without a bus, `reloadEveryMs` is how revocations arrive. */
  bus: EventBus | null;
  reloadEveryMs?: number;
}

/**
 * The denylist of a process that verifies user tokens: loaded from identity (retried until it succeeds; until
 * then `sync.isLoaded()` is false and tokens are refused with 503, so a process started before identity forgets
 * none), kept current by the TokenRevoked broadcast, and reloaded after every (re)made subscription, since events
 * published while the broadcast queue was gone are lost. Resolves after the first load attempt.
 */
export async function followIdentityRevocations(
  options: FollowRevocationsOptions,
): Promise<{ revocations: RevocationList; sync: RevocationSync }> {
  const { logger, shutdown, bus } = options;
  const revocations = createRevocationList();
  const sync = startRevocationSync({
    load: () => loadRevocations(options.identityUrl, revocations, logger, options.serviceToken),
    logger,
    reloadEveryMs: options.reloadEveryMs,
  });
  shutdown.add('revocation loading', () => sync.stop());
  if (bus) {
    const feed = await bus.broadcast(
      'revocations',
      { TokenRevoked: async (event) => revocations.add(event.data) },
      { onSubscribed: () => sync.reload() },
    );
    shutdown.add('revocation feed', () => feed.stop());
  }
  await sync.firstAttempt;
  return { revocations, sync };
}
