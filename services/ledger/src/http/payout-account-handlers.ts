import type { RequestHandler } from 'express';
import { ReplacePayoutAccountBody } from '@payments/contracts';
import { bodyValidator } from '@payments/service-kit';
import type { PayoutAccount } from '../use-cases/payout-accounts.js';
import { viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';

const readReplacement = bodyValidator(ReplacePayoutAccountBody);

const render = (linked: PayoutAccount, onboardingUrl?: string) => ({
  provider: linked.provider,
  account: linked.account,
  ...(onboardingUrl && { onboarding_url: onboardingUrl }),
  payouts_enabled: linked.payoutsEnabled,
  requirements: { currently_due: linked.currentlyDue, disabled_reason: linked.disabledReason },
  created_at: linked.createdAt.toISOString(),
});

/** The connected account at the provider a user's withdrawals are paid out to (use-cases/payout-accounts.ts). */
export function createPayoutAccountHandlers({
  payoutAccounts,
}: LedgerHttpDeps): Record<
  'linkPayoutAccount' | 'showPayoutAccount' | 'replacePayoutAccount',
  RequestHandler
> {
  /**
   * Makes the account and links it (201), or, once linked, keeps it (200); either way with a fresh onboarding link,
   * for the user to complete or resume the provider's onboarding.
   */
  const linkPayoutAccount: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const linked = await payoutAccounts.link(viewer.userId, req.log);
    const onboardingUrl = await payoutAccounts.onboardingLink(linked.account, req.log);
    res.status(linked.created ? 201 : 200).json(render(linked, onboardingUrl));
  };

  const showPayoutAccount: RequestHandler = async (req, res) => {
    res.json(render(await payoutAccounts.find(viewerOf(req).userId)));
  };

  /** A new account made at the provider, linked in place of the one named (ADR 0122), with its onboarding link. */
  const replacePayoutAccount: RequestHandler = async (req, res) => {
    const body = readReplacement(req);
    const linked = await payoutAccounts.replace(viewerOf(req).userId, body.replaces, req.log);
    const onboardingUrl = await payoutAccounts.onboardingLink(linked.account, req.log);
    res.json(render(linked, onboardingUrl));
  };

  return { linkPayoutAccount, showPayoutAccount, replacePayoutAccount };
}
