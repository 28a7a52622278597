import type { RequestHandler, Response } from 'express';
import { AdminAccountQuery, OpenAccountBody, PageQuery } from '@payments/contracts';
import {
  bodyValidator,
  pageRequestOf,
  queryValidator,
  renderPage,
  type PageRequest,
} from '@payments/service-kit';
import { readMetadata } from '../domain/metadata.js';
import { currencyUnitOf, exponentsFor } from '../use-cases/currencies.js';
import { adminOf, correlationIdOf, pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { exponentIn, renderAccount } from './presenters.js';

const readOpenAccount = bodyValidator(OpenAccountBody);
const readPage = queryValidator(PageQuery);
const readAdminAccountQuery = queryValidator(AdminAccountQuery);

export function createAccountHandlers({
  accounts,
  currencies,
}: LedgerHttpDeps): Record<'openAccount' | 'listAccounts' | 'findAccounts' | 'showAccount', RequestHandler> {
  const openAccount: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const body = readOpenAccount(req);
    const { account, currency } = await accounts.open({
      userId: viewer.userId,
      currency: body.currency,
      metadata: readMetadata(body.metadata),
      correlationId: correlationIdOf(req),
    });
    res.status(201).location(`/account/${account.id}`).json(renderAccount(account, currency.exponent));
  };

  const listAccounts: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const request = pageRequestOf(readPage(req));
    await renderAccounts(res, request, await accounts.list(viewer.userId, request));
  };

  /** GET /admin/accounts?user_id=: the list the user would see, for an operator; anyone else is refused. */
  const findAccounts: RequestHandler = async (req, res) => {
    adminOf(req, "list another user's accounts");
    const { user_id: userId, ...window } = readAdminAccountQuery(req);
    const request = pageRequestOf(window);
    await renderAccounts(res, request, await accounts.list(userId, request));
  };

  const renderAccounts = async (
    res: Response,
    request: PageRequest,
    page: Awaited<ReturnType<typeof accounts.list>>,
  ) => {
    const exponents = await exponentsFor(
      currencies,
      page.data.map((account) => account.currency),
    );
    res.json(
      renderPage(page, request, (account) => renderAccount(account, exponentIn(exponents, account.currency))),
    );
  };

  const showAccount: RequestHandler = async (req, res) => {
    const account = await accounts.readable(pathId(req, 'Account'), viewerOf(req));
    res.json(renderAccount(account, (await currencyUnitOf(currencies, account.currency)).exponent));
  };

  return { openAccount, listAccounts, findAccounts, showAccount };
}
