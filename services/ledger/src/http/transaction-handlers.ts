import type { RequestHandler } from 'express';
import { HistoryQuery } from '@payments/contracts';
import { accessDenied, apiVersionOf, notFound, queryValidator } from '@payments/service-kit';
import type { HistoryScope } from '../data/ledger-store.js';
import { readDateRange } from '../domain/history.js';
import { canRead, type Transaction } from '../domain/transaction.js';
import { exponentsFor } from '../use-cases/currencies.js';
import { pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderPagination, renderProviderPayment, renderTransaction } from './presenters.js';

const readHistoryQuery = queryValidator(HistoryQuery);

const currenciesOf = (transactions: Transaction[]) =>
  transactions.flatMap((t) => (t.convertedCurrency ? [t.currency, t.convertedCurrency] : [t.currency]));

export function createTransactionHandlers({
  store,
  accounts,
  currencies,
}: LedgerHttpDeps): Record<
  'showTransaction' | 'listTransactions' | 'listAccountTransactions',
  RequestHandler
> {
  const showTransaction: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    const transaction = await store.findTransaction(pathId(req, 'Transaction'));
    if (!transaction) throw notFound('Transaction');
    if (!canRead(transaction, viewer)) throw accessDenied('This transaction belongs to another user');
    const [exponents, payment] = await Promise.all([
      exponentsFor(currencies, currenciesOf([transaction])),
      store.providerPayments.find(transaction.id),
    ]);
    const body = renderTransaction(transaction, exponents, apiVersionOf(req));
    const payable = transaction.userId === viewer.userId && transaction.status === 'pending';
    const shown = payment && renderProviderPayment(payment, payable);
    res.json(shown ? { ...body, provider_payment: shown } : body);
  };

  const sendHistory = async (
    req: Parameters<RequestHandler>[0],
    res: Parameters<RequestHandler>[1],
    scopeOf: (query: ReturnType<typeof readHistoryQuery>) => Promise<HistoryScope>,
  ) => {
    const query = readHistoryQuery(req);
    const range = readDateRange(query.from, query.to);
    const scope = await scopeOf(query);
    const { limit, offset } = query;
    const page = await store.listTransactions(
      scope,
      { type: query.type, status: query.status, ...range },
      { limit, offset },
    );
    const exponents = await exponentsFor(currencies, currenciesOf(page.data));
    const version = apiVersionOf(req);
    res.json({
      data: page.data.map((transaction) => renderTransaction(transaction, exponents, version)),
      pagination: renderPagination(limit, offset, page.total),
    });
  };

  /** The caller's transactions, or one of their accounts' with `account_id`. */
  const listTransactions: RequestHandler = (req, res) =>
    sendHistory(req, res, async (query) => {
      const viewer = viewerOf(req);
      if (!query.account_id) return { userId: viewer.userId };
      const account = await accounts.readable(query.account_id.toLowerCase(), viewer);
      return { accountId: account.id };
    });

  const listAccountTransactions: RequestHandler = (req, res) =>
    sendHistory(req, res, async () => {
      const account = await accounts.readable(pathId(req, 'Account'), viewerOf(req));
      return { accountId: account.id };
    });

  return { showTransaction, listTransactions, listAccountTransactions };
}
