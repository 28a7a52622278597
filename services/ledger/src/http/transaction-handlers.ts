import type { Request, RequestHandler, Response } from 'express';
import { HistoryQuery, METADATA_FILTER_PATTERN } from '@payments/contracts';
import { apiVersionOf, pageRequestOf, queryValidator, renderPage } from '@payments/service-kit';
import { readDateRange, readMetadataFilter } from '../domain/history.js';
import { seesOwnFields, type Transaction } from '../domain/transaction.js';
import { exponentsFor } from '../use-cases/currencies.js';
import { pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderProviderPayment, renderTransaction } from './presenters.js';

const readHistoryQuery = queryValidator(HistoryQuery);
const METADATA_FILTER = new RegExp(METADATA_FILTER_PATTERN);

const currenciesOf = (transactions: Transaction[]) =>
  transactions.flatMap((t) => (t.convertedCurrency ? [t.currency, t.convertedCurrency] : [t.currency]));

export function createTransactionHandlers({
  transactions,
  currencies,
  paymentPageBase,
}: LedgerHttpDeps): Record<
  'showTransaction' | 'listTransactions' | 'listAccountTransactions',
  RequestHandler
> {
  const showTransaction: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const { transaction, providerPayment, showSecret } = await transactions.show(
      pathId(req, 'Transaction'),
      viewer,
    );
    const exponents = await exponentsFor(currencies, currenciesOf([transaction]));
    const body = renderTransaction(
      transaction,
      exponents,
      apiVersionOf(req),
      seesOwnFields(transaction, viewer),
    );
    const shown = providerPayment && renderProviderPayment(providerPayment, showSecret, paymentPageBase);
    res.json(shown ? { ...body, provider_payment: shown } : body);
  };

  /** A page of history: the caller's, or with `accountIdOf` one account's (after the query is read). */
  const sendHistory = async (
    req: Request,
    res: Response,
    accountIdOf: (query: { account_id?: string }) => string | null,
  ) => {
    const query = readHistoryQuery(req);
    const range = readDateRange(query.from, query.to);
    const request = pageRequestOf(query);
    const viewer = viewerOf(req);
    const metadata = readMetadataFilter(query, METADATA_FILTER);
    const page = await transactions.history(
      { accountId: accountIdOf(query), viewer },
      { type: query.type, status: query.status, ...range, reference: query.reference, metadata },
      request,
    );
    const exponents = await exponentsFor(currencies, currenciesOf(page.data));
    const version = apiVersionOf(req);
    res.json(
      renderPage(page, request, (transaction) =>
        renderTransaction(transaction, exponents, version, seesOwnFields(transaction, viewer)),
      ),
    );
  };

  /** The caller's transactions, or one of their accounts' with `account_id`. */
  const listTransactions: RequestHandler = (req, res) =>
    sendHistory(req, res, (query) => query.account_id?.toLowerCase() ?? null);

  const listAccountTransactions: RequestHandler = (req, res) =>
    sendHistory(req, res, () => pathId(req, 'Account'));

  return { showTransaction, listTransactions, listAccountTransactions };
}
