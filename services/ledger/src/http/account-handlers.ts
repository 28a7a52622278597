import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { OpenAccountBody, PageQuery } from '@payments/contracts';
import { AppError, authRequired, bodyValidator, queryValidator } from '@payments/service-kit';
import { readMetadata } from '../domain/metadata.js';
import { accountOpenedEvent } from '../events/ledger-events.js';
import {
  correlationIdOf,
  currencyUnitOf,
  exponentsFor,
  pathId,
  readableAccount,
  viewerOf,
} from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { exponentIn, renderAccount, renderPagination } from './presenters.js';

const readOpenAccount = bodyValidator(OpenAccountBody);
const readPage = queryValidator(PageQuery);

export function createAccountHandlers({
  store,
  currencies,
  outbox,
  maxAccountsPerUser,
}: LedgerHttpDeps): Record<'openAccount' | 'listAccounts' | 'showAccount', RequestHandler> {
  /** Accounts open only in a supported currency; the error lists the ones that are. */
  const supportedCurrency = async (given: string) => {
    const code = given.trim().toUpperCase();
    const currency = await currencies.find(code);
    if (currency?.supported) return currency;
    const supported = (await currencies.supported()).map((c) => c.code).sort();
    throw new AppError(
      'INVALID_CURRENCY',
      `${code || 'The currency'} is not a supported currency. Supported currencies: ${supported.join(', ')}`,
      [{ field: 'currency', message: `must be one of ${supported.join(', ')}` }],
    );
  };

  const openAccount: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const body = readOpenAccount(req);
    const metadata = readMetadata(body.metadata);
    const currency = await supportedCurrency(body.currency);
    const account = await store.inTransaction(async (unit) => {
      await unit.lockUser(viewer.userId);
      // Once the ledger removed a user, their token is about to be revoked: nothing may land on a new account.
      if (await unit.isRemovedUser(viewer.userId)) throw authRequired('The user of this token was deleted');
      if ((await unit.countAccounts(viewer.userId)) >= maxAccountsPerUser) {
        throw new AppError(
          'BUSINESS_RULE_VIOLATION',
          `A user may hold at most ${maxAccountsPerUser} accounts`,
        );
      }
      const opened = await unit.insertAccount({
        id: randomUUID(),
        userId: viewer.userId,
        currency: currency.code,
        metadata,
      });
      await unit.enqueue([accountOpenedEvent(opened, correlationIdOf(req))]);
      return opened;
    });
    outbox.wake();
    res.status(201).location(`/account/${account.id}`).json(renderAccount(account, currency.exponent));
  };

  const listAccounts: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const { limit, offset } = readPage(req);
    const page = await store.listUserAccounts(viewer.userId, { limit, offset });
    const exponents = await exponentsFor(
      currencies,
      page.data.map((account) => account.currency),
    );
    res.json({
      data: page.data.map((account) => renderAccount(account, exponentIn(exponents, account.currency))),
      pagination: renderPagination(limit, offset, page.total),
    });
  };

  const showAccount: RequestHandler = async (req, res) => {
    const account = await readableAccount(store, pathId(req, 'Account'), viewerOf(req));
    res.json(renderAccount(account, (await currencyUnitOf(currencies, account.currency)).exponent));
  };

  return { openAccount, listAccounts, showAccount };
}
