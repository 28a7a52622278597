import { resourceMissing, StripeApiError } from '../stripe/objects.js';

/** How a held payout's bank answers when it is released. */
export type PayoutOutcome = 'paid' | 'failed';

/**
 * Payouts whose bank answer waits for a drill (SANDBOX_HOLD_PAYOUTS): each stays pending, however long, until
 * `POST /sandbox/payouts/{id}/release` says how its bank answers, so a drill decides when a payout ends (one
 * answered only after the ledger's hold expired: the late-payout attack) and how.
 */
export interface HeldPayouts {
  hold(accountId: string, payoutId: string): void;
  /** Lets a held payout go: resolves with its connected account. One never held, or let go already, is refused. */
  release(payoutId: string): string;
}

export function createHeldPayouts(): HeldPayouts {
  const held = new Map<string, { accountId: string; released: boolean }>();
  return {
    hold(accountId, payoutId) {
      held.set(payoutId, { accountId, released: false });
    },
    release(payoutId) {
      const found = held.get(payoutId);
      if (!found) throw resourceMissing(404, 'id', `No held payout: '${payoutId}'`);
      if (found.released) {
        throw new StripeApiError(409, {
          type: 'invalid_request_error',
          code: 'payout_already_released',
          message: `The payout '${payoutId}' was released already.`,
        });
      }
      found.released = true;
      return found.accountId;
    },
  };
}

/** The `outcome` of a release's JSON body. */
export function outcomeOf(body: unknown): PayoutOutcome {
  const outcome = (body as { outcome?: unknown } | undefined)?.outcome;
  if (outcome === 'paid' || outcome === 'failed') return outcome;
  throw new StripeApiError(400, {
    type: 'invalid_request_error',
    code: 'parameter_invalid',
    param: 'outcome',
    message: 'A release says how the bank answers: {"outcome": "paid"} or {"outcome": "failed"}.',
  });
}
