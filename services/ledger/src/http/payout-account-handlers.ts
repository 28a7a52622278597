import type { RequestHandler } from 'express';
import { AppError, notFound } from '@payments/service-kit';
import { ProviderRefusal } from '../provider/payment-provider.js';
import { viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';

const render = (linked: { provider: string; account: string; createdAt: Date }, onboardingUrl?: string) => ({
  provider: linked.provider,
  account: linked.account,
  ...(onboardingUrl && { onboarding_url: onboardingUrl }),
  created_at: linked.createdAt.toISOString(),
});

/**
 * The connected account at the provider a user's withdrawals are paid out to (Stripe Connect, one per user). The
 * ledger makes it at the provider, so nobody can name someone else's account as theirs.
 */
export function createPayoutAccountHandlers({
  store,
  provider,
}: LedgerHttpDeps): Record<'linkPayoutAccount' | 'showPayoutAccount', RequestHandler> {
  /**
   * Makes the account and links it (201), or, once linked, keeps it (200); either way with a fresh onboarding link,
   * for the user to complete or resume the provider's onboarding.
   */
  const linkPayoutAccount: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    if (!provider) {
      throw new AppError('BUSINESS_RULE_VIOLATION', 'No payment provider is configured to pay out through');
    }
    const asking = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (error instanceof ProviderRefusal) {
          throw new AppError('BUSINESS_RULE_VIOLATION', `The payment provider refused: ${error.reason}`);
        }
        req.log.error({ err: error }, 'the payment provider did not make or link a payout account');
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'The payment provider cannot be reached; try again shortly',
        );
      }
    };
    const existing = await store.providerPayments.findPayoutAccount(viewer.userId);
    const linked = existing
      ? { ...existing, created: false }
      : await store.providerPayments.linkPayoutAccount({
          userId: viewer.userId,
          provider: provider.name,
          account: await asking(() => provider.createPayoutAccount({ userId: viewer.userId })),
        });
    const onboardingUrl = await asking(() => provider.onboardingLink(linked.account));
    res.status(linked.created ? 201 : 200).json(render(linked, onboardingUrl));
  };

  const showPayoutAccount: RequestHandler = async (req, res) => {
    const linked = await store.providerPayments.findPayoutAccount(viewerOf(req).userId);
    if (!linked) throw notFound('Payout account');
    res.json(render(linked));
  };

  return { linkPayoutAccount, showPayoutAccount };
}
