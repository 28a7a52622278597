import type { RequestHandler } from 'express';
import { OpenAccountBody, PageQuery } from '@payments/contracts';
import { bodyValidator, pageRequestOf, queryValidator, renderPage } from '@payments/service-kit';
import { readMetadata } from '../domain/metadata.js';
import { currencyUnitOf, exponentsFor } from '../use-cases/currencies.js';
import { correlationIdOf, pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { exponentIn, renderAccount } from './presenters.js';

const readOpenAccount = bodyValidator(OpenAccountBody);
const readPage = queryValidator(PageQuery);

export function createAccountHandlers({
  accounts,
  currencies,
}: LedgerHttpDeps): Record<'openAccount' | 'listAccounts' | 'showAccount', RequestHandler> {
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
    const page = await accounts.list(viewer.userId, request);
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

  return { openAccount, listAccounts, showAccount };
}
