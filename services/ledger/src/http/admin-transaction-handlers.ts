import type { RequestHandler } from 'express';
import {
  AdminTransactionQuery,
  METADATA_FILTER_PATTERN,
  formatMinor,
  minorToNumber,
} from '@payments/contracts';
import {
  apiVersionOf,
  pageRequestOf,
  queryValidator,
  renderPage,
  validationError,
} from '@payments/service-kit';
import { readMetadataFilter } from '../domain/history.js';
import type { TimelineEntry } from '../domain/timeline.js';
import {
  checkOrdered,
  readAmountBound,
  readIdPrefix,
  readSearchBound,
  type TransactionSearch,
} from '../domain/transaction-search.js';
import type { ListedTransaction } from '../use-cases/admin-transactions.js';
import { exponentsFor } from '../use-cases/currencies.js';
import { adminOf, pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { exponentIn, renderTransaction, type Exponents } from './presenters.js';

const readQuery = queryValidator(AdminTransactionQuery);
const METADATA_FILTER = new RegExp(METADATA_FILTER_PATTERN);

type Version = ReturnType<typeof apiVersionOf>;

/** A transaction as operators see it: every field its owner sees but the client secret, and whose it is. */
export function renderListedTransaction(
  { transaction, providerPayment }: ListedTransaction,
  exponents: Exponents,
  version: Version,
) {
  return {
    ...renderTransaction(transaction, exponents, version, true),
    user_id: transaction.userId,
    counterparty_user_id: transaction.counterpartyUserId,
    ...(providerPayment && {
      provider_payment: {
        provider: providerPayment.provider,
        kind: providerPayment.kind,
        reference: providerPayment.reference,
        state: providerPayment.state,
        attempts: providerPayment.attempts,
        last_error: providerPayment.lastError,
      },
    }),
  };
}

function renderEntry(entry: TimelineEntry, exponents: Exponents) {
  return {
    at: entry.at.toISOString(),
    kind: entry.kind,
    source: entry.source,
    summary: entry.summary,
    ...(entry.status !== undefined && { status: entry.status }),
    ...(entry.reason !== undefined && { reason: entry.reason }),
    ...(entry.reference !== undefined && { reference: entry.reference }),
    ...(entry.amount !== undefined &&
      entry.currency !== undefined && {
        amount: minorToNumber(entry.amount, exponentIn(exponents, entry.currency)),
        currency: entry.currency,
      }),
    ...(entry.accountId !== undefined && { account_id: entry.accountId }),
    ...(entry.transactionId !== undefined && { transaction_id: entry.transactionId }),
    ...(entry.eventId !== undefined && { event_id: entry.eventId }),
    ...(entry.eventType !== undefined && { event_type: entry.eventType }),
    ...(entry.endpointId !== undefined && { endpoint_id: entry.endpointId }),
    ...(entry.url !== undefined && { url: entry.url }),
    ...(entry.attempt !== undefined && { attempt: entry.attempt }),
    ...(entry.statusCode !== undefined && { status_code: entry.statusCode }),
    ...(entry.error !== undefined && { error: entry.error }),
  };
}

/** GET /admin/transactions and a transaction's timeline: admins only, checked here whatever the gateway did. */
export function createAdminTransactionHandlers({
  adminTransactions,
  currencies,
}: LedgerHttpDeps): Record<'findTransactions' | 'showTimeline', RequestHandler> {
  /** The query as a search: bounds read exactly, amounts in the currency's units (which they need). */
  const readSearch = async (query: ReturnType<typeof readQuery>): Promise<TransactionSearch> => {
    const currency = query.currency?.toUpperCase();
    const amounts = query.amount_min !== undefined || query.amount_max !== undefined;
    if (amounts && currency === undefined) {
      throw validationError(
        [{ field: 'currency', message: 'is required with amount_min or amount_max' }],
        'Invalid query parameters',
      );
    }
    const unit = currency === undefined ? null : await currencies.find(currency);
    if (currency !== undefined && !unit) {
      throw validationError(
        [{ field: 'currency', message: 'is not a known currency' }],
        'Invalid query parameters',
      );
    }
    const from = query.from === undefined ? undefined : readSearchBound(query.from, 'from');
    const through = query.to === undefined ? undefined : readSearchBound(query.to, 'to');
    checkOrdered(from, through, ['from', 'to']);
    const amountMin =
      unit && query.amount_min !== undefined
        ? readAmountBound(query.amount_min, 'amount_min', unit)
        : undefined;
    const amountMax =
      unit && query.amount_max !== undefined
        ? readAmountBound(query.amount_max, 'amount_max', unit)
        : undefined;
    checkOrdered(amountMin, amountMax, ['amount_min', 'amount_max']);
    return {
      type: query.type,
      status: query.status,
      accountId: query.account_id?.toLowerCase(),
      userId: query.user_id?.toLowerCase(),
      currency,
      from,
      through,
      amountMin,
      amountMax,
      reference: query.reference,
      metadata: readMetadataFilter(query, METADATA_FILTER),
      ...(query.q !== undefined && readIdPrefix(query.q)),
    };
  };

  const findTransactions: RequestHandler = async (req, res) => {
    adminOf(req, "search every user's transactions");
    const query = readQuery(req);
    const search = await readSearch(query);
    const request = pageRequestOf(query);
    const page = await adminTransactions.search(search, request);
    const exponents = await exponentsFor(
      currencies,
      page.data.flatMap(({ transaction: t }) =>
        t.convertedCurrency ? [t.currency, t.convertedCurrency] : [t.currency],
      ),
    );
    const version = apiVersionOf(req);
    res
      .set('Cache-Control', 'no-store')
      .json(renderPage(page, request, (listed) => renderListedTransaction(listed, exponents, version)));
  };

  const showTimeline: RequestHandler = async (req, res) => {
    adminOf(req, "read a transaction's timeline");
    const id = pathId(req, 'Transaction');
    // Summaries write amounts with their currency's decimals; the supported set is cached, ISO's 2 otherwise.
    const supported = new Map((await currencies.supported()).map((unit) => [unit.code, unit.exponent]));
    const found = await adminTransactions.timeline(
      id,
      (amount, currency) => `${formatMinor(amount, supported.get(currency) ?? 2)} ${currency}`,
    );
    const exponents = await exponentsFor(currencies, [
      found.listed.transaction.currency,
      ...(found.listed.transaction.convertedCurrency ? [found.listed.transaction.convertedCurrency] : []),
      ...found.entries.flatMap((entry) => (entry.currency ? [entry.currency] : [])),
    ]);
    const version = apiVersionOf(req);
    res.set('Cache-Control', 'no-store').json({
      transaction: renderListedTransaction(found.listed, exponents, version),
      entries: found.entries.map((entry) => renderEntry(entry, exponents)),
      sources: found.sources,
      truncated: found.truncated,
    });
  };

  return { findTransactions, showTimeline };
}
