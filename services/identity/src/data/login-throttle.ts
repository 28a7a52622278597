import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ThrottleStore } from './throttle-store.js';

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export type CheckOutcome<T> = { allowed: true; verdict: T } | { allowed: false; retryAfterSeconds: number };

/**
 * Password checks (logins, and the current password of a credential change) per identity and per client address,
 * in fixed windows. Only failed checks count against the failure limit, so many right passwords from one address
 * (a NAT, a platform's backend) pass; every check counts against a far higher ceiling per address, against floods.
 */
export interface LoginThrottle {
  /**
   * Runs `verify` when neither the identity nor the address has used up its failures (else refused before
   * anything is verified) and the address its attempts; a verdict that is not ok counts as a failure of both.
   */
  check<T extends { ok: boolean }>(
    identityKey: string,
    address: string,
    verify: () => Promise<T>,
  ): Promise<CheckOutcome<T>>;
}

export interface LoginThrottleOptions {
  maxFailures: number;
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
    /** Gives the slot back and forgets the key's failures (a right password starts the identity over). */
    async startOver(key: string): Promise<void> {
      const { failures } = decode((await limiter.get(key))?.consumedPoints ?? 0);
      const after = await limiter.reward(key, Math.max(failures, 0) * FAILURE + 1);
      // A concurrent start-over took the same failures away first: put back what went below zero.
      const overshoot = decode(after.consumedPoints).failures;
      if (overshoot < 0) await limiter.penalty(key, -overshoot * FAILURE);
    },
  };
}

export function createLoginThrottle(store: ThrottleStore, options: LoginThrottleOptions): LoginThrottle {
  const window = { duration: options.windowSeconds };
  // Points are not what decides for slot counters (they are read through `decode`); penalty never refuses.
  const byIdentity = createSlots(
    store.limiter('login_slots_identity', { ...window, points: options.maxFailures }),
    options.maxFailures,
  );
  const byAddress = createSlots(
    store.limiter('login_slots_address', { ...window, points: options.maxFailures }),
    options.maxFailures,
  );
  const attempts = store.limiter('login_attempts_address', {
    ...window,
    points: options.maxAttemptsPerAddress,
  });
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;

  const refused = (ms: number) => ({ allowed: false, retryAfterSeconds: retryAfterSecondsOf(ms) }) as const;

  /** Both slots, or why not; never one without the other. */
  const takeBoth = async (identityKey: string, address: string): Promise<Take> => {
    const addressSlot = await byAddress.take(address);
    if (addressSlot !== 'taken') return addressSlot;
    const identitySlot = await byIdentity.take(identityKey);
    if (identitySlot !== 'taken') await byAddress.giveBack(address);
    return identitySlot;
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
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        const slot = await takeBoth(identityKey, address);
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
        await Promise.all([byIdentity.giveBack(identityKey), byAddress.giveBack(address)]);
        throw error;
      }
      await (verdict.ok
        ? Promise.all([byIdentity.startOver(identityKey), byAddress.giveBack(address)])
        : Promise.all([byIdentity.fail(identityKey), byAddress.fail(address)]));
      return { allowed: true, verdict };
    },
  };
}

export function retryAfterSecondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
