import { AppError, type Logger } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import { ProviderRefusal, type PaymentProvider } from '../provider/payment-provider.js';

export interface LinkedPayoutAccount {
  provider: string;
  account: string;
  createdAt: Date;
  /** Linked by this call, rather than found linked. */
  created: boolean;
}

/**
 * The connected account at the provider a user's withdrawals are paid out to (Stripe Connect, one per user). The
 * ledger makes it at the provider, so nobody can name someone else's account as theirs. A provider that refuses is
 * a 422; one that cannot be reached, or fails otherwise, is logged and a 503.
 */
export interface PayoutAccounts {
  /** The user's account: the one linked, or one the provider makes now and the ledger links (once per user). */
  link(userId: string, log: Pick<Logger, 'error'>): Promise<LinkedPayoutAccount>;
  /** Where the user completes (or resumes) the provider's onboarding of their account. */
  onboardingLink(account: string, log: Pick<Logger, 'error'>): Promise<string>;
  /** A withdrawal by a user with none links one first (PAYOUT_ACCOUNT_AUTO_LINK, ADR 0099). */
  readonly linkOnWithdrawal: boolean;
}

export function createPayoutAccounts({
  store,
  provider,
  linkOnWithdrawal,
}: {
  store: LedgerStore;
  provider: PaymentProvider;
  linkOnWithdrawal: boolean;
}): PayoutAccounts {
  const asking = async <T>(log: Pick<Logger, 'error'>, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderRefusal) {
        throw new AppError('BUSINESS_RULE_VIOLATION', `The payment provider refused: ${error.reason}`);
      }
      log.error({ err: error }, 'the payment provider did not make or link a payout account');
      throw new AppError('SERVICE_UNAVAILABLE', 'The payment provider cannot be reached; try again shortly');
    }
  };

  const linkNow = async (userId: string, log: Pick<Logger, 'error'>): Promise<LinkedPayoutAccount> => {
    const existing = await store.providerPayments.findPayoutAccount(userId);
    if (existing) return { ...existing, created: false };
    const account = await asking(log, () => provider.createPayoutAccount({ userId }));
    return store.providerPayments.linkPayoutAccount({ userId, provider: provider.name, account });
  };

  // Concurrent requests of one user (two withdrawals at once) join this process's link under way; another
  // process's call gets the same account from the provider (its idempotency key, payout-account:<user id>), and
  // the table links one per user.
  const underWay = new Map<string, Promise<LinkedPayoutAccount>>();

  return {
    linkOnWithdrawal,
    async link(userId, log) {
      const joined = underWay.get(userId);
      if (joined) return { ...(await joined), created: false };
      const linking = linkNow(userId, log).finally(() => underWay.delete(userId));
      underWay.set(userId, linking);
      return linking;
    },
    onboardingLink: (account, log) => asking(log, () => provider.onboardingLink(account)),
  };
}
