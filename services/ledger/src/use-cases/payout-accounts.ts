import type { Logger } from '@payments/service-kit';
import { ProviderRefusal, type PaymentProvider } from '../provider/payment-provider.js';
import { refusalsOf } from './errors.js';

/** What linking and reading payout accounts may refuse with. */
export type PayoutAccountError = 'BUSINESS_RULE_VIOLATION' | 'SERVICE_UNAVAILABLE' | 'RESOURCE_NOT_FOUND';

export interface PayoutAccount {
  provider: string;
  account: string;
  createdAt: Date;
}

export interface LinkedPayoutAccount extends PayoutAccount {
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
  /** The account linked for the user. */
  find(userId: string): Promise<PayoutAccount>;
  /** A withdrawal by a user with none links one first (PAYOUT_ACCOUNT_AUTO_LINK, ADR 0099). */
  readonly linkOnWithdrawal: boolean;
}

export interface PayoutAccountStore {
  findPayoutAccount(userId: string): Promise<PayoutAccount | null>;
  /** Links a user's connected account, unless one is linked already; resolves with the one linked. */
  linkPayoutAccount(link: {
    userId: string;
    provider: string;
    account: string;
  }): Promise<LinkedPayoutAccount>;
}

const refuse = refusalsOf<PayoutAccountError>();

export function createPayoutAccounts({
  store,
  provider,
  linkOnWithdrawal,
}: {
  store: PayoutAccountStore;
  /** None: nothing is paid out through a provider, and no account can be linked. */
  provider: PaymentProvider | null;
  linkOnWithdrawal: boolean;
}): PayoutAccounts {
  const configured = () => {
    if (!provider)
      throw refuse('BUSINESS_RULE_VIOLATION', 'No payment provider is configured to pay out through');
    return provider;
  };

  const asking = async <T>(log: Pick<Logger, 'error'>, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderRefusal) {
        throw refuse('BUSINESS_RULE_VIOLATION', `The payment provider refused: ${error.reason}`);
      }
      log.error({ err: error }, 'the payment provider did not make or link a payout account');
      throw refuse('SERVICE_UNAVAILABLE', 'The payment provider cannot be reached; try again shortly');
    }
  };

  const linkNow = async (
    userId: string,
    asked: PaymentProvider,
    log: Pick<Logger, 'error'>,
  ): Promise<LinkedPayoutAccount> => {
    const existing = await store.findPayoutAccount(userId);
    if (existing) return { ...existing, created: false };
    const account = await asking(log, () => asked.createPayoutAccount({ userId }));
    return store.linkPayoutAccount({ userId, provider: asked.name, account });
  };

  // Concurrent requests of one user (two withdrawals at once) join this process's link under way; another
  // process's call gets the same account from the provider (its idempotency key, payout-account:<user id>), and
  // the table links one per user.
  const underWay = new Map<string, Promise<LinkedPayoutAccount>>();

  return {
    linkOnWithdrawal: provider !== null && linkOnWithdrawal,
    async link(userId, log) {
      const asked = configured();
      const joined = underWay.get(userId);
      if (joined) return { ...(await joined), created: false };
      const linking = linkNow(userId, asked, log).finally(() => underWay.delete(userId));
      underWay.set(userId, linking);
      return linking;
    },
    onboardingLink: (account, log) => asking(log, () => configured().onboardingLink(account)),
    async find(userId) {
      const linked = await store.findPayoutAccount(userId);
      if (!linked) throw refuse('RESOURCE_NOT_FOUND', 'Payout account not found');
      return linked;
    },
  };
}
