import type Stripe from 'stripe';
import { failsBySandboxRule } from '../domain/test-amounts.js';
import { requirementsOf, type Verification } from './account-requirements.js';
import { resourceMissing, StripeApiError, stripeEvent, stripeId as id, unixNow as now } from './objects.js';
import { listPage, type ListQuery } from './lists.js';
import type { PlatformBalance } from './platform-balance.js';

/**
 * Stripe Connect as a platform pays its users out, kept in the sandbox's memory: connected accounts (each with one
 * bank account, onboarded at once), transfers from the platform's balance to a connected account, their reversals,
 * and payouts from a connected account's balance to its bank. Every change yields the events Stripe would send;
 * those about a connected account carry its id in `account`. Objects are the `stripe` library's own types.
 */

/** The fields of a connected account the sandbox keeps (Stripe's type, narrowed to them). */
export type ConnectedAccount = Pick<
  Stripe.Account,
  | 'id'
  | 'object'
  | 'type'
  | 'country'
  | 'default_currency'
  | 'email'
  | 'metadata'
  | 'created'
  | 'charges_enabled'
  | 'payouts_enabled'
  | 'details_submitted'
  | 'requirements'
>;

export type ConnectEvent =
  | Stripe.AccountUpdatedEvent
  | Stripe.TransferCreatedEvent
  | Stripe.TransferReversedEvent
  | Stripe.PayoutCreatedEvent
  | Stripe.PayoutPaidEvent
  | Stripe.PayoutFailedEvent;

/** Stripe's test bank account numbers (docs.stripe.com/connect/testing): how a payout to each ends. */
const FAILING_BANK_ACCOUNTS: Record<string, { code: string; message: string }> = {
  '000111111116': {
    code: 'no_account',
    message: 'The bank account details on file are probably incorrect. No bank account could be located.',
  },
  '000111111113': { code: 'account_closed', message: 'The bank account has been closed.' },
  '000222222227': { code: 'insufficient_funds', message: 'The bank account has insufficient funds.' },
  '000333333335': {
    code: 'debit_not_authorized',
    message: 'Debit transactions are not approved on the account.',
  },
  '000444444440': { code: 'invalid_currency', message: 'The bank account cannot accept this currency.' },
};
export const DEFAULT_BANK_ACCOUNT = '000123456789';
/** How a payout fails when the sandbox is told to fail it (POST /sandbox/payouts/{id}/release). */
const TOLD_TO_FAIL = { code: 'could_not_process', message: 'The bank could not process this payout.' };

/** The object asked for (`id`, `account` in the path): 404; one a parameter names: 400, as Stripe answers. */
const missing = (param: string, message: string) =>
  resourceMissing(param === 'id' || param === 'account' ? 404 : 400, param, message);
const insufficient = (message: string) =>
  new StripeApiError(400, { type: 'invalid_request_error', code: 'balance_insufficient', message });

export interface ConnectStore {
  createAccount(params: {
    country: string;
    email?: string;
    metadata: Record<string, string>;
    bankAccount: string;
    verification: Verification;
  }): ConnectedAccount;
  retrieveAccount(accountId: string): ConnectedAccount;
  /**
   * The account's verification as onboarding (or the test) moved it (stripe/account-requirements.ts), and its
   * metadata; an `account.updated` when anything changed.
   */
  updateAccount(
    accountId: string,
    params: { verification?: Verification; metadata?: Record<string, string> },
  ): { account: ConnectedAccount; events: ConnectEvent[] };
  createAccountLink(accountId: string, returnUrl: string): Stripe.AccountLink;
  createTransfer(params: {
    amount: number;
    currency: string;
    destination: string;
    metadata: Record<string, string>;
    transferGroup?: string;
  }): { transfer: Stripe.Transfer; events: ConnectEvent[] };
  retrieveTransfer(transferId: string): Stripe.Transfer;
  listTransfers(
    query: ListQuery,
    filter: { destination?: string; transferGroup?: string },
  ): Stripe.ApiList<Stripe.Transfer>;
  reverseTransfer(
    transferId: string,
    params: { amount?: number; metadata: Record<string, string> },
  ): { reversal: Stripe.TransferReversal; events: ConnectEvent[] };
  createPayout(
    accountId: string,
    params: { amount: number; currency: string; metadata: Record<string, string> },
  ): { payout: Stripe.Payout; events: ConnectEvent[] };
  /**
   * A payout made on `accountId` (the Stripe-Account header); without one, the platform's own, of which the sandbox
   * makes none. Another account's payout is missing here, as at Stripe.
   */
  retrievePayout(accountId: string | undefined, payoutId: string): Stripe.Payout;
  /** The payouts made on `accountId` (the Stripe-Account header); without one, the platform's own: none. */
  listPayouts(
    accountId: string | undefined,
    query: ListQuery,
    filter: { status?: string },
  ): Stripe.ApiList<Stripe.Payout>;
  /**
   * The bank's answer to a pending payout: paid, or failed and its amount back on the account's balance. Without
   * `outcome`, the bank decides (Stripe's failing test bank accounts, amounts ending in 13); with it, as told.
   */
  settlePayout(accountId: string, payoutId: string, outcome?: 'paid' | 'failed'): ConnectEvent[];
}

export function createConnectStore(platform: PlatformBalance): ConnectStore {
  const accounts = new Map<string, ConnectedAccount & { bankAccount: string }>();
  /** By connected account, then currency: what it holds at the provider. */
  const balances = new Map<string, Map<string, number>>();
  const transfers = new Map<string, Stripe.Transfer>();
  const payouts = new Map<string, Stripe.Payout & { account: string }>();

  const event = <E extends ConnectEvent>(type: E['type'], object: unknown, account?: string): E =>
    stripeEvent<E>(type, object, { account });

  const accountOf = (accountId: string, param = 'account') => {
    const found = accounts.get(accountId);
    if (!found) throw missing(param, `No such account: '${accountId}'`);
    return found;
  };
  const transferOf = (transferId: string) => {
    const found = transfers.get(transferId);
    if (!found) throw missing('id', `No such transfer: '${transferId}'`);
    return found;
  };
  const adjust = (accountId: string, currency: string, delta: number) => {
    const held = balances.get(accountId) ?? new Map<string, number>();
    held.set(currency, (held.get(currency) ?? 0) + delta);
    balances.set(accountId, held);
  };
  const available = (accountId: string, currency: string) => balances.get(accountId)?.get(currency) ?? 0;
  /** Why the bank refuses a payout by itself: Stripe's failing test bank accounts, or an amount ending in 13. */
  const bankFailure = (accountId: string, payout: Stripe.Payout) =>
    FAILING_BANK_ACCOUNTS[accountOf(accountId).bankAccount] ??
    (failsBySandboxRule(payout.amount)
      ? {
          code: 'account_closed',
          message: 'The bank account has been closed (sandbox: amounts ending in 13 fail).',
        }
      : null);
  const view = ({ bankAccount: _bank, ...account }: ConnectedAccount & { bankAccount: string }) =>
    structuredClone(account);
  const payoutView = ({ account: _account, ...payout }: Stripe.Payout & { account: string }): Stripe.Payout =>
    structuredClone(payout);

  return {
    createAccount({ country, email, metadata, bankAccount, verification }) {
      const account = {
        id: id('acct'),
        object: 'account' as const,
        type: 'express' as const,
        country,
        default_currency: country === 'US' ? 'usd' : 'eur',
        email: email ?? null,
        metadata,
        created: now(),
        charges_enabled: false,
        // Unless a test value says otherwise, the sandbox onboards at once: paid out to from the start.
        ...requirementsOf(verification),
        details_submitted: true,
        bankAccount,
      };
      accounts.set(account.id, account);
      return view(account);
    },

    retrieveAccount: (accountId) => view(accountOf(accountId)),

    updateAccount(accountId, { verification, metadata }) {
      const account = accountOf(accountId, 'id');
      const before = JSON.stringify(view(account));
      if (verification) Object.assign(account, requirementsOf(verification));
      if (metadata) account.metadata = { ...account.metadata, ...metadata };
      const shown = view(account);
      const changed = JSON.stringify(shown) !== before;
      return {
        account: shown,
        events: changed ? [event<Stripe.AccountUpdatedEvent>('account.updated', shown, accountId)] : [],
      };
    },

    createAccountLink(accountId, returnUrl) {
      accountOf(accountId);
      // No onboarding to do here: the link leads straight back to the platform.
      return { object: 'account_link', created: now(), expires_at: now() + 300, url: returnUrl };
    },

    createTransfer({ amount, currency, destination, metadata, transferGroup }) {
      accountOf(destination, 'destination');
      const transfer: Stripe.Transfer = {
        id: id('tr'),
        object: 'transfer',
        amount,
        amount_reversed: 0,
        balance_transaction: id('txn'),
        created: now(),
        currency,
        description: null,
        destination,
        livemode: false,
        metadata,
        reversals: { object: 'list', data: [], has_more: false, url: '' },
        reversed: false,
        source_transaction: null,
        transfer_group: transferGroup ?? null,
      };
      transfer.reversals.url = `/v1/transfers/${transfer.id}/reversals`;
      transfers.set(transfer.id, transfer);
      adjust(destination, currency, amount);
      platform.add(currency, -amount);
      return { transfer: structuredClone(transfer), events: [event('transfer.created', transfer)] };
    },

    retrieveTransfer: (transferId) => structuredClone(transferOf(transferId)),

    listTransfers: (query, { destination, transferGroup }) =>
      listPage(transfers.values(), query, {
        url: '/v1/transfers',
        name: 'transfer',
        matches: (transfer) =>
          (!destination || transfer.destination === destination) &&
          (!transferGroup || transfer.transfer_group === transferGroup),
        view: structuredClone,
      }),

    reverseTransfer(transferId, { amount, metadata }) {
      const transfer = transferOf(transferId);
      const left = transfer.amount - transfer.amount_reversed;
      const reversing = amount ?? left;
      if (reversing < 1 || reversing > left) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: 'parameter_invalid_integer',
          param: 'amount',
          message: `Only ${left} of this transfer is left to reverse.`,
        });
      }
      const destination = transfer.destination as string;
      if (available(destination, transfer.currency) < reversing) {
        throw insufficient('The connected account does not hold enough to reverse this transfer.');
      }
      adjust(destination, transfer.currency, -reversing);
      platform.add(transfer.currency, reversing);
      const reversal: Stripe.TransferReversal = {
        id: id('trr'),
        object: 'transfer_reversal',
        amount: reversing,
        balance_transaction: id('txn'),
        created: now(),
        currency: transfer.currency,
        destination_payment_refund: null,
        metadata,
        source_refund: null,
        transfer: transfer.id,
      };
      transfer.amount_reversed += reversing;
      transfer.reversed = transfer.amount_reversed === transfer.amount;
      transfer.reversals.data.unshift(reversal);
      return { reversal: structuredClone(reversal), events: [event('transfer.reversed', transfer)] };
    },

    createPayout(accountId, { amount, currency, metadata }) {
      const account = accountOf(accountId);
      if (!account.payouts_enabled) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: 'payouts_not_allowed',
          message: `Payouts are not enabled for the account ${accountId}: its requirements are not met.`,
        });
      }
      if (available(accountId, currency) < amount) {
        throw insufficient(
          `You have insufficient funds in your Stripe account for this transfer. Your ${currency} balance is too low.`,
        );
      }
      adjust(accountId, currency, -amount);
      const payout: Stripe.Payout & { account: string } = {
        id: id('po'),
        object: 'payout',
        amount,
        application_fee: null,
        application_fee_amount: null,
        arrival_date: now() + 86_400,
        automatic: false,
        balance_transaction: id('txn'),
        created: now(),
        currency,
        description: null,
        destination: `ba_${account.bankAccount}`,
        failure_balance_transaction: null,
        failure_code: null,
        failure_message: null,
        livemode: false,
        metadata,
        method: 'standard',
        original_payout: null,
        payout_method: null,
        reconciliation_status: 'not_applicable',
        reversed_by: null,
        source_type: 'card',
        statement_descriptor: null,
        status: 'pending',
        trace_id: null,
        type: 'bank_account',
        account: accountId,
      };
      payouts.set(payout.id, payout);
      const shown = payoutView(payout);
      return { payout: shown, events: [event('payout.created', shown, accountId)] };
    },

    retrievePayout(accountId, payoutId) {
      const payout = payouts.get(payoutId);
      if (!payout || payout.account !== accountId) throw missing('id', `No such payout: '${payoutId}'`);
      return payoutView(payout);
    },

    listPayouts: (accountId, query, { status }) =>
      listPage(
        [...payouts.values()].filter((payout) => payout.account === accountId),
        query,
        {
          url: '/v1/payouts',
          name: 'payout',
          matches: (payout) => !status || payout.status === status,
          view: payoutView,
        },
      ),

    settlePayout(accountId, payoutId, outcome) {
      const payout = payouts.get(payoutId);
      if (!payout || payout.account !== accountId || payout.status !== 'pending') return [];
      const failure = outcome ? (outcome === 'failed' ? TOLD_TO_FAIL : null) : bankFailure(accountId, payout);
      if (failure) {
        Object.assign(payout, {
          status: 'failed',
          failure_code: failure.code,
          failure_message: failure.message,
          failure_balance_transaction: id('txn'),
        });
        // A failed payout's amount returns to the connected account's balance.
        adjust(accountId, payout.currency, payout.amount);
      } else payout.status = 'paid';
      return [event(failure ? 'payout.failed' : 'payout.paid', payoutView(payout), accountId)];
    },
  };
}
