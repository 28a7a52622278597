import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ThrottleStore } from './throttle-store.js';

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export type CheckOutcome<T> = { allowed: true; verdict: T } | { allowed: false; retryAfterSeconds: number };

/**
 * Password checks (logins, and the current password of a credential change) in fixed windows. Only failed checks
 * count: per account from one client address (the pair, so a guesser spends their own allowance, not the owner's),
 * per account from all addresses (a far higher ceiling, against a guess spread over many addresses) and per address
 * over all accounts (against a spray). Every check counts against a ceiling per address, against floods.
 */
export interface LoginThrottle {
  /**
   * Runs `verify` when none of the pair, the account and the address has used up its failures (else refused before
   * anything is verified) and the address its attempts; a verdict that is not ok counts as a failure of all three.
   */
  check<T extends { ok: boolean }>(
    identityKey: string,
    address: string,
    verify: () => Promise<T>,
  ): Promise<CheckOutcome<T>>;
}

export interface LoginThrottleOptions {
  /** Failures per account from one client address. */
  maxFailures: number;
  /** Failures per account from every address together: more than one address's `maxFailures` can spend. */
  maxFailuresPerAccount: number;
  /** Failures per client address over every account. */
  maxFailuresPerAddress: number;
  maxAttemptsPerAddress: number;
  windowSeconds: number;
  /** How long a check waits for a slot that checks in flight hold, before it is refused. */
  maxWaitMs?: number;
}

/**
 * A slot counter holds a key's failures and its checks in flight in one number, failures × FAILURE + in flight, so
 * that one atomic increment both takes a slot and reads both counts, and one turns a slot into a failure.
 */
const FAILURE = 1_000_000;
const POLL_MS = 10;
const DEFAULT_MAX_WAIT_MS = 5_000;

/** In flight is signed: a slot given back after its window ended leaves -1 in the next (one spare slot, no more). */
function decode(value: number): { failures: number; inFlight: number } {
  const failures = Math.round(value / FAILURE);
  return { failures, inFlight: value - failures * FAILURE };
}

type Take = 'taken' | 'busy' | { refusedForMs: number };

function createSlots(limiter: RateLimiterAbstract, maxFailures: number) {
  return {
    /**
     * A slot for one check, while failures plus checks in flight (this one included) stay within the limit: of
     * N concurrent wrong guesses, no more run than could fail without passing it. A full counter whose failures
     * have not reached the limit is busy: its checks in flight may yet succeed and give their slots back.
     */
    async take(key: string): Promise<Take> {
      const counted = await limiter.penalty(key, 1);
      const { failures, inFlight } = decode(counted.consumedPoints);
      if (Math.max(failures, 0) + Math.max(inFlight, 1) <= maxFailures) return 'taken';
      await limiter.reward(key, 1);
      return failures >= maxFailures ? { refusedForMs: counted.msBeforeNext } : 'busy';
    },
    async giveBack(key: string): Promise<void> {
      await limiter.reward(key, 1);
    },
    /** The slot stays taken, now as a failure, until the window ends. */
    async fail(key: string): Promise<void> {
      await limiter.penalty(key, FAILURE - 1);
    },
    /** Gives the slot back and forgets the key's failures (a right password starts its pair over). */
    async startOver(key: string): Promise<void> {
      const { failures } = decode((await limiter.get(key))?.consumedPoints ?? 0);
      const after = await limiter.reward(key, Math.max(failures, 0) * FAILURE + 1);
      // A concurrent start-over took the same failures away first: put back what went below zero.
      const overshoot = decode(after.consumedPoints).failures;
      if (overshoot < 0) await limiter.penalty(key, -overshoot * FAILURE);
    },
  };
}

type Slots = ReturnType<typeof createSlots>;

export function createLoginThrottle(store: ThrottleStore, options: LoginThrottleOptions): LoginThrottle {
  const window = { duration: options.windowSeconds };
  // Points are not what decides for slot counters (they are read through `decode`); penalty never refuses.
  const slots = (keyPrefix: string, maxFailures: number) =>
    createSlots(store.limiter(keyPrefix, { ...window, points: maxFailures }), maxFailures);
  const byPair = slots('login_slots_pair', options.maxFailures);
  const byAddress = slots('login_slots_address', options.maxFailuresPerAddress);
  const byAccount = slots('login_slots_account', options.maxFailuresPerAccount);
  const attempts = store.limiter('login_attempts_address', {
    ...window,
    points: options.maxAttemptsPerAddress,
  });
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;

  const refused = (ms: number) => ({ allowed: false, retryAfterSeconds: retryAfterSecondsOf(ms) }) as const;

  /**
   * Every slot, or why not; never some without the others. The most widely shared counter is taken last, so a
   * check refused by its own pair never holds a slot another client's check would find busy.
   */
  const takeAll = async (counters: readonly (readonly [Slots, string])[]): Promise<Take> => {
    for (const [i, [counter, key]] of counters.entries()) {
      const slot = await counter.take(key);
      if (slot === 'taken') continue;
      await Promise.all(counters.slice(0, i).map(([taken, takenKey]) => taken.giveBack(takenKey)));
      return slot;
    }
    return 'taken';
  };

  return {
    async check<T extends { ok: boolean }>(
      identityKey: string,
      address: string,
      verify: () => Promise<T>,
    ): Promise<CheckOutcome<T>> {
      try {
        await attempts.consume(address);
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        return refused(error.msBeforeNext);
      }
      const pairKey = JSON.stringify([address, identityKey]);
      const counters = [
        [byPair, pairKey],
        [byAddress, address],
        [byAccount, identityKey],
      ] as const;
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        const slot = await takeAll(counters);
        if (slot === 'taken') break;
        if (slot !== 'busy') return refused(slot.refusedForMs);
        // Right passwords give their slots back within a hash's time: waiting for one, rather than refusing,
        // is what lets many through from one address while wrong ones stay bounded.
        if (Date.now() >= deadline) return refused(1000);
        await sleep(POLL_MS + Math.random() * POLL_MS);
      }
      let verdict: T;
      try {
        verdict = await verify();
      } catch (error) {
        await Promise.all(counters.map(([counter, key]) => counter.giveBack(key)));
        throw error;
      }
      // A right password starts only its own pair over: the account's count stays, or the owner's logins would
      // hand a guesser spread over many addresses a fresh allowance each time.
      await (verdict.ok
        ? Promise.all([
            byPair.startOver(pairKey),
            byAddress.giveBack(address),
            byAccount.giveBack(identityKey),
          ])
        : Promise.all(counters.map(([counter, key]) => counter.fail(key))));
      return { allowed: true, verdict };
    },
  };
}

export function retryAfterSecondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
