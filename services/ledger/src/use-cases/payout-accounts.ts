import type { Logger } from '@payments/service-kit';
import {
  ProviderRefusal,
  type PaymentProvider,
  type PayoutAccountStatus,
} from '../provider/payment-provider.js';
import { refusalsOf } from './errors.js';

/** What linking, replacing and reading payout accounts may refuse with. */
export type PayoutAccountError =
  | 'BUSINESS_RULE_VIOLATION'
  | 'SERVICE_UNAVAILABLE'
  | 'RESOURCE_NOT_FOUND'
  | 'CONFLICT'
  | 'PAYOUTS_NOT_ENABLED';

export interface PayoutAccount extends PayoutAccountStatus {
  provider: string;
  account: string;
  createdAt: Date;
}

export interface LinkedPayoutAccount extends PayoutAccount {
  /** Linked by this call, rather than found linked. */
  created: boolean;
}

/** A withdrawal's view of its user's payout account, read before the acceptance statement. */
export interface WithdrawalPayoutCheck extends PayoutAccountStatus {
  account: string;
  /** The available balance covers the withdrawal's hold (false: the statement refuses it INSUFFICIENT_FUNDS). */
  covered: boolean;
  /** Its idempotency key or reference is claimed already: the statement replays the first answer. */
  claimed: boolean;
}

/** What the provider reported of a connected account (Stripe's account.updated), with when it made the report. */
export interface PayoutAccountUpdate {
  account: string;
  status: PayoutAccountStatus;
  /** The event's `created`. */
  asOf: Date;
  eventId: string;
  livemode: boolean;
}

/** What became of an update: taken, already so, settled by asking the provider, or about nothing linked here. */
export type UpdateOutcome = 'applied' | 'unchanged' | 'asked_provider' | 'not_linked' | 'other_mode';

/**
 * The connected account at the provider a user's withdrawals are paid out to (Stripe Connect, one per user at a
 * time), and whether the provider pays out to it now. The ledger makes it at the provider, so nobody can name
 * someone else's account as theirs. A provider that refuses is a 422; one that cannot be reached, or fails
 * otherwise, is logged and a 503.
 */
export interface PayoutAccounts {
  /**
   * The user's account: the one linked (its readiness read again from the provider), or one the provider makes now
   * and the ledger links with its readiness (once per user).
   */
  link(userId: string, log: Pick<Logger, 'error'>): Promise<LinkedPayoutAccount>;
  /**
   * Links a new account made at the provider in place of `replaces`, while no withdrawal of the user is pending
   * (else 409). Asked again once replaced (`replaces` is the account replaced), it answers the new one.
   */
  replace(userId: string, replaces: string, log: Pick<Logger, 'error'>): Promise<PayoutAccount>;
  /** Where the user completes (or resumes) the provider's onboarding of their account. */
  onboardingLink(account: string, log: Pick<Logger, 'error'>): Promise<string>;
  /** The account linked for the user. */
  find(userId: string): Promise<PayoutAccount>;
  /**
   * Refuses (422 PAYOUTS_NOT_ENABLED) a withdrawal whose user's linked account the provider does not pay out to,
   * unless the acceptance statement would refuse it anyway (its funds) or replay it (its key or reference).
   */
  checkWithdrawal(check: WithdrawalCheck): Promise<void>;
  /** Takes what the provider reported of a connected account, unless it is older than what the ledger holds. */
  follow(update: PayoutAccountUpdate, log: Pick<Logger, 'info' | 'warn'>): Promise<UpdateOutcome>;
  /** A withdrawal by a user with none links one first (PAYOUT_ACCOUNT_AUTO_LINK, ADR 0099). */
  readonly linkOnWithdrawal: boolean;
}

export interface WithdrawalCheck {
  userId: string;
  accountId: string;
  hold: bigint;
  idempotencyKey: string | null;
  reference: string | null;
}

/** A status as the ledger holds it, with when it was so. */
export interface HeldStatus extends PayoutAccountStatus {
  asOf: Date | null;
}

export interface PayoutAccountStore {
  findPayoutAccount(userId: string): Promise<(PayoutAccount & { asOf: Date | null }) | null>;
  /** Links a user's connected account with its readiness, unless one is linked already; resolves with the one linked. */
  linkPayoutAccount(link: {
    userId: string;
    provider: string;
    account: string;
    status: PayoutAccountStatus;
    asOf: Date;
  }): Promise<LinkedPayoutAccount>;
  /** How many times the user's account was replaced, and the account it replaced last. */
  replacementsOf(
    userId: string,
  ): Promise<{ account: string; replacedAccount: string | null; count: number } | null>;
  hasPendingWithdrawal(userId: string): Promise<boolean>;
  /**
   * Links `account` in place of `replaces`, as the `count`th replacement, with its readiness, in one statement that
   * finds no pending withdrawal of the user. Resolves with why it did not, or the account linked.
   */
  replacePayoutAccount(replacement: {
    userId: string;
    replaces: string;
    count: number;
    account: string;
    status: PayoutAccountStatus;
    asOf: Date;
  }): Promise<{ outcome: 'replaced'; linked: PayoutAccount } | { outcome: 'pending_withdrawal' | 'changed' }>;
  /**
   * Takes a reported status when it is newer than the one held (`asOf`, strictly); resolves with what was held, or
   * null when no user has the account linked.
   */
  applyReported(update: { account: string; status: PayoutAccountStatus; asOf: Date }): Promise<{
    applied: boolean;
    held: HeldStatus;
  } | null>;
  /**
   * Records the status the provider answered for the account, as of `asOf`, if what is held is still as of
   * `heldAsOf` (nothing newer was taken meanwhile). Resolves with whether it did.
   */
  recordFetched(update: {
    account: string;
    status: PayoutAccountStatus;
    asOf: Date;
    heldAsOf: Date | null;
  }): Promise<boolean>;
  withdrawalCheck(check: WithdrawalCheck): Promise<WithdrawalPayoutCheck | null>;
}

const refuse = refusalsOf<PayoutAccountError>();

const sameStatus = (a: PayoutAccountStatus, b: PayoutAccountStatus) =>
  a.payoutsEnabled === b.payoutsEnabled &&
  a.disabledReason === b.disabledReason &&
  a.currentlyDue.length === b.currentlyDue.length &&
  a.currentlyDue.every((item, index) => b.currentlyDue[index] === item);

/** Why the provider does not pay out to an account, as the owner reads it. */
export function notEnabledDetail(account: string, status: PayoutAccountStatus): string {
  const due = status.currentlyDue.length > 0 ? `; still due: ${status.currentlyDue.join(', ')}` : '';
  const reason = status.disabledReason ? ` (${status.disabledReason})` : '';
  return (
    `The provider does not pay out to your payout account ${account} yet${reason}${due}. ` +
    'Complete its onboarding (POST /payout-account gives the link), then withdraw'
  );
}

export function createPayoutAccounts({
  store,
  provider,
  linkOnWithdrawal,
  livemode = false,
}: {
  store: PayoutAccountStore;
  /** None: nothing is paid out through a provider, and no account can be linked. */
  provider: PaymentProvider | null;
  linkOnWithdrawal: boolean;
  /** The mode the provider's key works in: an update of the other mode changes nothing. */
  livemode?: boolean;
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
      log.error({ err: error }, 'the payment provider did not make, link or show a payout account');
      throw refuse('SERVICE_UNAVAILABLE', 'The payment provider cannot be reached; try again shortly');
    }
  };

  /** The account's readiness as the provider answers it now, and as of when (before the call: never too new). */
  const statusNow = async (asked: PaymentProvider, account: string, log: Pick<Logger, 'error'>) => {
    const asOf = new Date();
    const status = await asking(log, () => asked.payoutAccountStatus(account));
    return { status, asOf };
  };

  const linkNow = async (
    userId: string,
    asked: PaymentProvider,
    log: Pick<Logger, 'error'>,
  ): Promise<LinkedPayoutAccount> => {
    const existing = await store.findPayoutAccount(userId);
    if (existing) {
      // Linked already: its readiness read again (the user may be back from the provider's onboarding).
      const { asOf: heldAsOf, ...linked } = existing;
      const { status, asOf } = await statusNow(asked, linked.account, log);
      const recorded = await store.recordFetched({ account: linked.account, status, asOf, heldAsOf });
      return { ...linked, ...(recorded ? status : {}), created: false };
    }
    const account = await asking(log, () => asked.createPayoutAccount({ userId }));
    const { status, asOf } = await statusNow(asked, account, log);
    return store.linkPayoutAccount({ userId, provider: asked.name, account, status, asOf });
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

    async replace(userId, replaces, log) {
      const asked = configured();
      const current = await store.replacementsOf(userId);
      if (!current) throw refuse('RESOURCE_NOT_FOUND', 'Payout account not found');
      const answerCurrent = async () => {
        const linked = await store.findPayoutAccount(userId);
        if (!linked) throw refuse('RESOURCE_NOT_FOUND', 'Payout account not found');
        const { asOf: _asOf, ...shown } = linked;
        return shown;
      };
      // Asked again once it was replaced: the new one, replacing nothing.
      if (current.account !== replaces) {
        if (current.replacedAccount === replaces) return answerCurrent();
        throw refuse(
          'CONFLICT',
          `${replaces} is not your linked payout account: GET /payout-account shows the one to replace`,
        );
      }
      const inFlight = () =>
        refuse(
          'CONFLICT',
          'A withdrawal of yours is still pending: the payout account can be replaced once it has ended',
        );
      // Asked before the provider makes anything: most replacements refused for it make no account there.
      if (await store.hasPendingWithdrawal(userId)) throw inFlight();
      const count = current.count + 1;
      const account = await asking(log, () => asked.createPayoutAccount({ userId, replacement: count }));
      const { status, asOf } = await statusNow(asked, account, log);
      const replaced = await store.replacePayoutAccount({ userId, replaces, count, account, status, asOf });
      if (replaced.outcome === 'replaced') return replaced.linked;
      if (replaced.outcome === 'pending_withdrawal') throw inFlight();
      // Another request replaced it meanwhile (with this same account: the provider's key is the count's).
      return answerCurrent();
    },

    onboardingLink: (account, log) => asking(log, () => configured().onboardingLink(account)),

    async find(userId) {
      const linked = await store.findPayoutAccount(userId);
      if (!linked) throw refuse('RESOURCE_NOT_FOUND', 'Payout account not found');
      const { asOf: _asOf, ...shown } = linked;
      return shown;
    },

    async checkWithdrawal(check) {
      const found = await store.withdrawalCheck(check);
      if (!found || found.payoutsEnabled || !found.covered || found.claimed) return;
      throw refuse('PAYOUTS_NOT_ENABLED', notEnabledDetail(found.account, found));
    },

    async follow(update, log) {
      const context = { account: update.account, provider_event_id: update.eventId };
      if (update.livemode !== livemode) {
        log.warn(context, 'an account.updated of the other mode changed nothing');
        return 'other_mode';
      }
      const taken = await store.applyReported(update);
      if (!taken) {
        // An account nobody here has linked (another platform's, or one replaced): nothing to follow.
        log.info(context, 'an account.updated about no linked payout account changed nothing');
        return 'not_linked';
      }
      if (taken.applied) return 'applied';
      if (sameStatus(taken.held, update.status)) return 'unchanged';
      // Older than what the ledger holds, and saying otherwise: never taken on its word. The provider's account as
      // it stands now decides (none configured: the newer status stays).
      if (!provider) return 'unchanged';
      // The status is as of the read (taken before it, as statusNow does): an event created before the read is
      // older than what it says, and cannot re-enable payouts after it.
      const asOf = new Date(Math.max(Date.now(), taken.held.asOf?.getTime() ?? 0));
      const status = await provider.payoutAccountStatus(update.account);
      await store.recordFetched({ account: update.account, status, asOf, heldAsOf: taken.held.asOf });
      log.info(context, 'an older account.updated disagreed: the account was read from the provider');
      return 'asked_provider';
    },
  };
}
