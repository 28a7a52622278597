import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import { formatMinor, type AnyEvent, type MinorUnits } from '@payments/contracts';
import type { Logger, OutboxRelay } from '@payments/service-kit';
import { feeFor, type FeeSchedule } from '../domain/fees.js';
import { isUuid } from '../domain/identifiers.js';
import { requestFingerprint } from '../domain/idempotency.js';
import {
  convertAmount,
  invalidAmount,
  parseDecimal,
  readAmount,
  type CurrencyUnit,
} from '../domain/money.js';
import {
  holdOf,
  type AccountFacts,
  type NewTransaction,
  type RequestedType,
  type Transaction,
} from '../domain/transaction.js';
import { requestedEvent } from '../events/ledger-events.js';
import { currencyUnitOf, type CurrencyDirectory } from './currencies.js';
import { refusalsOf } from './errors.js';
import type { PayoutAccounts } from './payout-accounts.js';

/** What a money request may be refused with (the amount's and the metadata's checks in domain/ among them). */
export type MoneyRequestError =
  | 'RESOURCE_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'INVALID_CURRENCY'
  | 'INVALID_AMOUNT'
  | 'INSUFFICIENT_FUNDS'
  | 'BUSINESS_RULE_VIOLATION'
  | 'CONFLICT'
  | 'DUPLICATE_ENTRY'
  | 'SERVICE_UNAVAILABLE'
  | 'PAYOUTS_NOT_ENABLED';

/** A deposit or withdrawal asked for by the owner of `accountId`. */
export interface MoneyRequest {
  userId: string;
  accountId: string;
  /** As the client gave it: a JSON number or a decimal string (domain/money.ts reads it). */
  amount: unknown;
  currency: string;
  /** The caller's own, checked at the edge (packages/contracts: TransactionMetadata). */
  metadata: Record<string, string>;
  /** Unique among the user's transactions: the same again replays the first answer, another body is a 409. */
  reference: string | null;
  idempotencyKey: string | null;
  /** The request's body as sent: a replay under the same idempotency key or reference must send the same one. */
  body: unknown;
  /** Deposits: the payment method the provider is to pay it with at once (`pm_…`, checked at the edge). */
  paymentMethod?: string | null;
  correlationId: string;
  log: Pick<Logger, 'error'>;
}

export interface TransferRequest extends MoneyRequest {
  toAccountId: string;
}

/** An accepted request (202), or the replay of the one first accepted under its idempotency key or reference. */
export interface AcceptedRequest {
  transaction: Transaction;
  replayed: boolean;
}

/**
 * Deposits, withdrawals and transfers, from a request to a pending transaction: checked against the account, with
 * their fee, held (withdrawals and transfers), recorded with their requested event, once per idempotency key.
 */
export interface MoneyRequests {
  deposit(request: MoneyRequest): Promise<AcceptedRequest>;
  withdraw(request: MoneyRequest): Promise<AcceptedRequest>;
  transfer(request: TransferRequest): Promise<AcceptedRequest>;
}

/** A money request to accept: the transaction, what it holds, its requested event and its idempotency key. */
export interface AcceptanceRequest {
  draft: NewTransaction;
  hold: MinorUnits;
  /** The destination account's currency as the request saw it (transfers); it must still hold it. */
  counterpartyCurrency: string | null;
  /** The event announcing the request, recorded in the outbox with it; null records none. */
  event: AnyEvent | null;
  /** A withdrawal paid out through a provider: refused, once its funds are there, while its user has none linked. */
  payoutAccountRequired: boolean;
  idempotencyKey: string | null;
  /** What the request was (domain/idempotency.ts), kept with its key's or reference's claim; null with neither. */
  fingerprint: string | null;
}

/** Nothing is written for any outcome but `accepted`. */
export type AcceptanceOutcome =
  | { kind: 'accepted'; transaction: Transaction }
  | { kind: 'replay' | 'reference_replay'; fingerprint: string; transaction: Transaction }
  | {
      kind:
        | 'account_not_found'
        | 'forbidden'
        | 'insufficient_funds'
        | 'destination_not_found'
        | 'payout_account_missing';
    };

export interface MoneyRequestStore {
  /** The owner and currency of those of the user accounts that exist, in one query. */
  findAccountFacts(accountIds: string[]): Promise<AccountFacts[]>;
  /**
   * Accepts a money request in one statement with the requests that arrive meanwhile (group commit), through the
   * database function ledger_accept_requests (migration 027_accept_requests_references): the idempotency key, the reference,
   * the destination's share lock, the hold (or the account's share lock) where the funds cover it, the payout
   * account's check, the transaction and its requested event. Refused or replayed requests write nothing.
   */
  accept(request: AcceptanceRequest): Promise<AcceptanceOutcome>;
}

interface Prepared {
  account: AccountFacts;
  currency: CurrencyUnit;
  amount: MinorUnits;
  fee: MinorUnits;
}

const noConversion = { exchangeRate: null, convertedAmount: null, convertedCurrency: null };

/** Accounts whose owner and currency this process remembers; beyond this many the least recently used go. */
const KNOWN_ACCOUNTS_MAX = 100_000;

const refuse = refusalsOf<MoneyRequestError>();

/** One set per process, sharing the account facts it remembers. */
export function createMoneyRequests({
  store,
  currencies,
  fees,
  maxAmount,
  payoutAccounts,
  paysOutThroughProvider,
  paysInThroughProvider,
  settleTransfer,
  outbox,
}: {
  store: MoneyRequestStore;
  currencies: CurrencyDirectory;
  fees: FeeSchedule;
  /** Largest amount per operation, in major units. */
  maxAmount: number;
  payoutAccounts: Pick<PayoutAccounts, 'link' | 'linkOnWithdrawal' | 'checkWithdrawal'>;
  /** Withdrawals are paid out through a payment provider, to the user's payout account. */
  paysOutThroughProvider: boolean;
  /** A payment provider makes each deposit's payment: a deposit may name the method it is paid with. */
  paysInThroughProvider: boolean;
  /** Settles a transfer this process accepted (its settlement is the ledger's own work). */
  settleTransfer: (transactionId: string, correlationId: string) => void;
  outbox: Pick<OutboxRelay, 'wake'>;
}): MoneyRequests {
  /**
   * An account's owner and currency, remembered: they never change, so a request needs no read of its own. The
   * acceptance statement checks again that the account (still) exists, is the viewer's and holds that currency.
   * Look-ups asked for in the same turn of the event loop share one query; an account not found is not remembered.
   */
  const facts = new DataLoader<string, AccountFacts | null>(
    async (ids) => {
      const found = new Map((await store.findAccountFacts([...ids])).map((fact) => [fact.id, fact]));
      return ids.map((id) => found.get(id) ?? null);
    },
    {
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
      cacheMap: new LRUCache<string, Promise<AccountFacts | null>>({ max: KNOWN_ACCOUNTS_MAX }),
    },
  );
  const accountFacts = async (accountId: string): Promise<AccountFacts | null> => {
    const found = await facts.load(accountId);
    if (!found) facts.clear(accountId);
    return found;
  };

  /** Checks a money request against its account and works out amount and fee, before anything is written. */
  const prepare = async (request: MoneyRequest, type: RequestedType): Promise<Prepared> => {
    const account = await accountFacts(request.accountId);
    if (!account) throw refuse('RESOURCE_NOT_FOUND', 'Account not found');
    if (account.userId !== request.userId)
      throw refuse('ACCESS_DENIED', 'This account belongs to another user');
    const requested = request.currency.trim().toUpperCase();
    if (requested !== account.currency) {
      throw refuse(
        'INVALID_CURRENCY',
        `The account holds ${account.currency}; the request is in ${requested}`,
        [{ field: 'currency', message: `must be ${account.currency}, the account currency` }],
      );
    }
    const currency = await currencyUnitOf(currencies, account.currency);
    const amount = readAmount(request.amount, currency, maxAmount);
    const fee = feeFor(amount, fees[type], currency);
    return { account, currency, amount, fee };
  };

  const draftOf = (type: RequestedType, request: MoneyRequest, prepared: Prepared): NewTransaction => {
    const id = randomUUID();
    return {
      id,
      accountId: prepared.account.id,
      userId: request.userId,
      type,
      amount: prepared.amount,
      currency: prepared.account.currency,
      fee: prepared.fee,
      counterpartyAccountId: null,
      counterpartyUserId: null,
      ...noConversion,
      metadata: request.metadata,
      reference: request.reference,
      // Deposits and payouts go through the provider under the transaction's own id.
      paymentId: type === 'transfer' ? null : id,
    };
  };

  /** One statement, one database transaction (store.accept); 202, or a replay. */
  const accept = async (
    request: MoneyRequest,
    draft: NewTransaction,
    prepared: Prepared,
    counterpartyCurrency: string | null = null,
  ): Promise<AcceptedRequest> => {
    const { idempotencyKey: key, correlationId } = request;
    const fingerprint = () => requestFingerprint(draft.type, draft.accountId, request.body);
    const acceptance: AcceptanceRequest = {
      draft,
      hold: holdOf(draft),
      counterpartyCurrency,
      // Deposits and withdrawals are requested from the provider through the outbox; a transfer's settlement is
      // this process's own work (settleTransfer below, or the recovery sweep). A deposit's payment method goes with
      // its request, to the provider's call (provider-requests.ts).
      event: requestedEvent(draft, correlationId, request.paymentMethod ?? null),
      // Paid out through the provider, a withdrawal needs somewhere to go, checked after its amount and funds.
      payoutAccountRequired: draft.type === 'withdrawal' && paysOutThroughProvider,
      idempotencyKey: key,
      fingerprint: key !== null || request.reference !== null ? fingerprint() : null,
    };
    // A payout account the provider does not pay out to refuses the withdrawal before anything is held, unless
    // the statement would refuse it for its funds or replay it (ADR 0122).
    const payable = () =>
      payoutAccounts.checkWithdrawal({
        userId: draft.userId,
        accountId: draft.accountId,
        hold: acceptance.hold,
        idempotencyKey: key,
        reference: request.reference,
      });
    if (acceptance.payoutAccountRequired) await payable();
    let outcome = await store.accept(acceptance);
    if (outcome.kind === 'payout_account_missing' && payoutAccounts.linkOnWithdrawal) {
      // Refused for its destination alone, having held nothing: linked as POST /payout-account links (the provider
      // asked outside any database transaction), it is accepted again, if the provider pays out to it.
      await payoutAccounts.link(draft.userId, request.log);
      await payable();
      outcome = await store.accept(acceptance);
    }
    switch (outcome.kind) {
      case 'account_not_found':
        throw refuse('RESOURCE_NOT_FOUND', 'Account not found');
      case 'forbidden':
        throw refuse('ACCESS_DENIED', 'This account belongs to another user');
      case 'destination_not_found':
        throw refuse('RESOURCE_NOT_FOUND', 'Destination account not found');
      case 'payout_account_missing':
        throw refuse(
          'BUSINESS_RULE_VIOLATION',
          'No payout account is linked: link one with POST /payout-account, then withdraw',
        );
      case 'insufficient_funds':
        throw refuse(
          'INSUFFICIENT_FUNDS',
          `The available balance does not cover ${formatMinor(holdOf(draft), prepared.currency.exponent)} ${draft.currency}`,
        );
      case 'replay':
        if (outcome.fingerprint !== fingerprint()) {
          throw refuse('CONFLICT', 'This Idempotency-Key was already used for a different request');
        }
        break;
      case 'reference_replay':
        if (outcome.fingerprint !== fingerprint()) {
          throw refuse(
            'DUPLICATE_ENTRY',
            `The reference already names transaction ${outcome.transaction.id}, requested with a different body`,
            [{ field: 'reference', message: 'is already used by another of your transactions' }],
          );
        }
        break;
      case 'accepted':
        if (draft.type === 'transfer') settleTransfer(draft.id, correlationId);
        else outbox.wake();
        break;
    }
    return { transaction: outcome.transaction, replayed: outcome.kind !== 'accepted' };
  };

  /** Cross-currency transfers convert at the currency service's (cached) rate, fixed at acceptance. */
  const conversionOf = async (prepared: Prepared, targetCode: string) => {
    const from = prepared.currency.code;
    const quote = await currencies.rate(from, targetCode);
    const rate = quote ? parseDecimal(quote.rate) : null;
    if (!quote || !rate || rate.units === 0n) {
      throw refuse('INVALID_CURRENCY', `No exchange rate from ${from} to ${targetCode} is available`);
    }
    const target = await currencyUnitOf(currencies, targetCode);
    const convertedAmount = convertAmount(prepared.amount, rate, prepared.currency, target);
    if (convertedAmount <= 0n) throw invalidAmount(`is too small to convert into ${targetCode}`);
    return { exchangeRate: quote.rate, convertedAmount, convertedCurrency: targetCode };
  };

  return {
    async deposit(request) {
      if (request.paymentMethod && !paysInThroughProvider) {
        throw refuse(
          'BUSINESS_RULE_VIOLATION',
          'No payment provider is configured here to pay a deposit with a payment_method',
          [{ field: 'payment_method', message: 'is accepted only where a payment provider makes payments' }],
        );
      }
      const prepared = await prepare(request, 'deposit');
      // A deposit must bring in more than its fee takes.
      if (prepared.fee >= prepared.amount) {
        throw invalidAmount(
          `must be more than the deposit fee of ${formatMinor(prepared.fee, prepared.currency.exponent)}`,
        );
      }
      return accept(request, draftOf('deposit', request, prepared), prepared);
    },

    async withdraw(request) {
      const prepared = await prepare(request, 'withdrawal');
      return accept(request, draftOf('withdrawal', request, prepared), prepared);
    },

    async transfer(request) {
      const destinationId = request.toAccountId.toLowerCase();
      // The destination's look-up joins the source's (one query), if either is not remembered yet.
      if (isUuid(destinationId)) void accountFacts(destinationId).catch(() => undefined);
      const prepared = await prepare(request, 'transfer');
      if (destinationId === prepared.account.id) {
        throw refuse('BUSINESS_RULE_VIOLATION', 'A transfer needs two different accounts', [
          { field: 'to_account_id', message: 'must differ from the source account' },
        ]);
      }
      const destination = await accountFacts(destinationId);
      if (!destination) throw refuse('RESOURCE_NOT_FOUND', 'Destination account not found');
      const crossCurrency = destination.currency !== prepared.account.currency;
      const draft: NewTransaction = {
        ...draftOf('transfer', request, prepared),
        counterpartyAccountId: destination.id,
        counterpartyUserId: destination.userId,
        ...(crossCurrency ? await conversionOf(prepared, destination.currency) : noConversion),
      };
      return accept(request, draft, prepared, destination.currency);
    },
  };
}
