import type Stripe from 'stripe';

/**
 * How the sandbox verifies a connected account, driven by test values as Stripe's test mode is
 * (docs.stripe.com/connect/testing, "Test identity verification"): the `individual[id_number]` given when the
 * account is made (`POST /v1/accounts`) or later (`POST /v1/accounts/{id}`, the user going through onboarding).
 *
 * - none, or `000000000` (Stripe: successful verification): verified, payouts enabled at once;
 * - `111111111` (Stripe: unsuccessful verification): the ID number stays due, payouts disabled
 *   (`requirements.past_due`);
 * - `222222222` (the sandbox's own): verification pending, payouts disabled
 *   (`requirements.pending_verification`), then verified and enabled SANDBOX_DELAY_MS later, with an
 *   `account.updated` for each change.
 */
export type Verification = 'verified' | 'unverified' | 'pending';

export const ID_NUMBER_VERIFIED = '000000000';
export const ID_NUMBER_UNVERIFIED = '111111111';
export const ID_NUMBER_PENDING = '222222222';

/** The verification an ID number leads to; any other number verifies, as Stripe's test mode does. */
export function verificationOf(idNumber: string | undefined): Verification {
  if (idNumber === ID_NUMBER_UNVERIFIED) return 'unverified';
  if (idNumber === ID_NUMBER_PENDING) return 'pending';
  return 'verified';
}

/** Stripe's `requirements` hash of an account in that state, and whether it pays out. */
export function requirementsOf(verification: Verification): {
  payouts_enabled: boolean;
  requirements: Stripe.Account.Requirements;
} {
  const requirements = (
    due: string[],
    pending: string[],
    reason: Stripe.Account.Requirements.DisabledReason | null,
  ): Stripe.Account.Requirements => ({
    alternatives: [],
    current_deadline: null,
    currently_due: due,
    disabled_reason: reason,
    errors: due.map((requirement) => ({
      code: 'verification_failed_id_number_match',
      reason: 'The ID number did not match the records (sandbox: 111111111 fails verification).',
      requirement,
    })),
    eventually_due: due,
    past_due: due,
    pending_verification: pending,
  });
  switch (verification) {
    case 'unverified':
      return {
        payouts_enabled: false,
        requirements: requirements(['individual.id_number'], [], 'requirements.past_due'),
      };
    case 'pending':
      return {
        payouts_enabled: false,
        requirements: requirements([], ['individual.id_number'], 'requirements.pending_verification'),
      };
    case 'verified':
      return { payouts_enabled: true, requirements: requirements([], [], null) };
  }
}
