import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Request, RequestHandler } from 'express';
import { LRUCache } from 'lru-cache';
import { formatMinor, MoneyBody, TransferBody, type MinorUnits } from '@payments/contracts';
import { accessDenied, apiVersionOf, AppError, bodyValidator, notFound } from '@payments/service-kit';
import { feeFor } from '../domain/fees.js';
import { isUuid } from '../domain/identifiers.js';
import { readIdempotencyKey, requestFingerprint } from '../domain/idempotency.js';
import {
  convertAmount,
  invalidAmount,
  parseDecimal,
  readAmount,
  type CurrencyUnit,
} from '../domain/money.js';
import { holdOf, type AccountFacts, type NewTransaction, type RequestedType } from '../domain/transaction.js';
import { requestedEvent } from '../events/ledger-events.js';
import type { Viewer } from '../domain/viewer.js';
import { currencyUnitOf, exponentsFor } from '../use-cases/currencies.js';
import { correlationIdOf, pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderTransaction } from './presenters.js';

const readMoney = bodyValidator(MoneyBody);
const readTransfer = bodyValidator(TransferBody);

interface Prepared<B> {
  body: B;
  viewer: Viewer;
  account: AccountFacts;
  currency: CurrencyUnit;
  amount: MinorUnits;
  fee: MinorUnits;
  idempotencyKey: string | null;
}

const noConversion = { exchangeRate: null, convertedAmount: null, convertedCurrency: null };

/** Accounts whose owner and currency this process remembers; beyond this many the least recently used go. */
const KNOWN_ACCOUNTS_MAX = 100_000;

/** A money request's answer: 202, or an idempotent replay of one. */
interface MoneyAnswer {
  location: string;
  replayed: boolean;
  /** The rendered transaction. */
  body: unknown;
}

type MoneyOperation = 'deposit' | 'withdraw' | 'transfer';

/** The routes' handlers (ledger-routes.ts): one set per process, sharing the account facts they remember. */
export function createMoneyHandlers(deps: LedgerHttpDeps): Record<MoneyOperation, RequestHandler> {
  const requests = createMoneyRequests(deps);
  const handler =
    (operation: MoneyOperation): RequestHandler =>
    async (req, res) => {
      const answer = await requests[operation](req);
      res.status(202).location(answer.location);
      if (answer.replayed) res.set('Idempotent-Replayed', 'true');
      res.json(answer.body);
    };
  return { deposit: handler('deposit'), withdraw: handler('withdraw'), transfer: handler('transfer') };
}

/** The money requests, from an Express request (its path `id`, parsed body, `auth`, headers) to their answer. */
function createMoneyRequests({
  store,
  currencies,
  outbox,
  transfers,
  fees,
  maxAmount,
  provider,
  payoutAccounts,
}: LedgerHttpDeps): Record<MoneyOperation, (req: Request) => Promise<MoneyAnswer>> {
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
  const prepare = async <B extends { amount: unknown; currency: string }>(
    req: Request,
    type: RequestedType,
    readBody: (req: Request) => B,
  ): Promise<Prepared<B>> => {
    const accountId = pathId(req, 'Account');
    const body = readBody(req);
    const viewer = viewerOf(req);
    const idempotencyKey = readIdempotencyKey(req.get('idempotency-key'));
    const account = await accountFacts(accountId);
    if (!account) throw notFound('Account');
    if (account.userId !== viewer.userId) throw accessDenied('This account belongs to another user');
    const requested = body.currency.trim().toUpperCase();
    if (requested !== account.currency) {
      throw new AppError(
        'INVALID_CURRENCY',
        `The account holds ${account.currency}; the request is in ${requested}`,
        [{ field: 'currency', message: `must be ${account.currency}, the account currency` }],
      );
    }
    const currency = await currencyUnitOf(currencies, account.currency);
    const amount = readAmount(body.amount, currency, maxAmount);
    const fee = feeFor(amount, fees[type], currency);
    return { body, viewer, account, currency, amount, fee, idempotencyKey };
  };

  const draftOf = (type: RequestedType, prepared: Prepared<unknown>): NewTransaction => {
    const id = randomUUID();
    return {
      id,
      accountId: prepared.account.id,
      userId: prepared.viewer.userId,
      type,
      amount: prepared.amount,
      currency: prepared.account.currency,
      fee: prepared.fee,
      counterpartyAccountId: null,
      counterpartyUserId: null,
      ...noConversion,
      // Deposits and payouts go through the provider under the transaction's own id.
      paymentId: type === 'transfer' ? null : id,
    };
  };

  /**
   * One statement, one database transaction (store.acceptRequest): idempotency key, destination share lock,
   * hold (or share lock), transaction, its requested event, the key's answer. 202, or a replay.
   */
  const accept = async (
    req: Request,
    draft: NewTransaction,
    prepared: Prepared<unknown>,
    counterpartyCurrency: string | null = null,
  ): Promise<MoneyAnswer> => {
    const { idempotencyKey: key } = prepared;
    const correlationId = correlationIdOf(req);
    const request = {
      draft,
      hold: holdOf(draft),
      counterpartyCurrency,
      // Deposits and withdrawals are requested from the provider through the outbox; a transfer's settlement is
      // this process's own work (transfers.submit below, or the recovery sweep).
      event: requestedEvent(draft, correlationId),
      // Paid out through the provider, a withdrawal needs somewhere to go, checked after its amount and funds.
      payoutAccountRequired: draft.type === 'withdrawal' && provider !== null,
      idempotency: key
        ? { key, fingerprint: requestFingerprint(draft.type, draft.accountId, req.body) }
        : null,
    };
    let outcome = await store.acceptRequest(request);
    if (outcome.kind === 'payout_account_missing' && payoutAccounts.linkOnWithdrawal) {
      // Refused for its destination alone, having held nothing: linked as POST /payout-account links (the provider
      // asked outside any database transaction), it is accepted again.
      await payoutAccounts.link(draft.userId, req.log);
      outcome = await store.acceptRequest(request);
    }
    switch (outcome.kind) {
      case 'account_not_found':
        throw notFound('Account');
      case 'forbidden':
        throw accessDenied('This account belongs to another user');
      case 'destination_not_found':
        throw notFound('Destination account');
      case 'payout_account_missing':
        throw new AppError(
          'BUSINESS_RULE_VIOLATION',
          'No payout account is linked: link one with POST /payout-account, then withdraw',
        );
      case 'insufficient_funds':
        throw new AppError(
          'INSUFFICIENT_FUNDS',
          `The available balance does not cover ${formatMinor(holdOf(draft), prepared.currency.exponent)} ${draft.currency}`,
        );
      case 'replay':
        if (outcome.fingerprint !== requestFingerprint(draft.type, draft.accountId, req.body)) {
          throw new AppError('CONFLICT', 'This Idempotency-Key was already used for a different request');
        }
        break;
      case 'accepted':
        if (draft.type === 'transfer') transfers.submit(draft.id, correlationId);
        else outbox.wake();
        break;
    }
    const { transaction } = outcome;
    const exponents = await exponentsFor(
      currencies,
      [transaction.currency, transaction.convertedCurrency].filter((code): code is string => code !== null),
    );
    return {
      location: `/transaction/${transaction.id}`,
      replayed: outcome.kind === 'replay',
      body: renderTransaction(transaction, exponents, apiVersionOf(req)),
    };
  };

  const deposit = async (req: Request): Promise<MoneyAnswer> => {
    const prepared = await prepare(req, 'deposit', readMoney);
    if (prepared.fee >= prepared.amount) {
      throw invalidAmount(
        `must be more than the deposit fee of ${formatMinor(prepared.fee, prepared.currency.exponent)}`,
      );
    }
    return accept(req, draftOf('deposit', prepared), prepared);
  };

  const withdraw = async (req: Request): Promise<MoneyAnswer> => {
    const prepared = await prepare(req, 'withdrawal', readMoney);
    return accept(req, draftOf('withdrawal', prepared), prepared);
  };

  const transfer = async (req: Request): Promise<MoneyAnswer> => {
    // The destination's look-up joins the source's (one query), if either is not remembered yet.
    const to = (req.body as { to_account_id?: unknown } | undefined)?.to_account_id;
    if (typeof to === 'string' && isUuid(to)) void accountFacts(to.toLowerCase()).catch(() => undefined);
    const prepared = await prepare(req, 'transfer', readTransfer);
    const destinationId = prepared.body.to_account_id.toLowerCase();
    if (destinationId === prepared.account.id) {
      throw new AppError('BUSINESS_RULE_VIOLATION', 'A transfer needs two different accounts', [
        { field: 'to_account_id', message: 'must differ from the source account' },
      ]);
    }
    const destination = await accountFacts(destinationId);
    if (!destination) throw notFound('Destination account');
    const crossCurrency = destination.currency !== prepared.account.currency;
    const draft: NewTransaction = {
      ...draftOf('transfer', prepared),
      counterpartyAccountId: destination.id,
      counterpartyUserId: destination.userId,
      ...(crossCurrency ? await conversionOf(prepared, destination.currency) : noConversion),
    };
    return accept(req, draft, prepared, destination.currency);
  };

  /** Cross-currency transfers convert at the currency service's (cached) rate, fixed at acceptance. */
  const conversionOf = async (prepared: Prepared<unknown>, targetCode: string) => {
    const from = prepared.currency.code;
    const quote = await currencies.rate(from, targetCode);
    const rate = quote ? parseDecimal(quote.rate) : null;
    if (!quote || !rate || rate.units === 0n) {
      throw new AppError('INVALID_CURRENCY', `No exchange rate from ${from} to ${targetCode} is available`);
    }
    const target = await currencyUnitOf(currencies, targetCode);
    const convertedAmount = convertAmount(prepared.amount, rate, prepared.currency, target);
    if (convertedAmount <= 0n) throw invalidAmount(`is too small to convert into ${targetCode}`);
    return { exchangeRate: quote.rate, convertedAmount, convertedCurrency: targetCode };
  };

  return { deposit, withdraw, transfer };
}
