import type { RequestHandler } from 'express';
import { PageQuery } from '@payments/contracts';
import { accessDenied, apiVersionOf, queryValidator } from '@payments/service-kit';
import { exponentsFor, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import {
  exponentIn,
  renderOverdrawnAccount,
  renderPagination,
  renderReconciliationCase,
} from './presenters.js';

const readPage = queryValidator(PageQuery);

/** Operators' views of the ledger, through the gateway with an admin token. */
export function createAdminHandlers({
  store,
  currencies,
}: LedgerHttpDeps): Record<'listReconciliation' | 'listOverdrawnAccounts', RequestHandler> {
  const listReconciliation: RequestHandler = async (req, res) => {
    if (viewerOf(req).role !== 'admin') throw accessDenied('Only an administrator may see reconciliation');
    const { limit, offset } = readPage(req);
    const page = await store.listAwaitingReconciliation({ limit, offset });
    const exponents = await exponentsFor(
      currencies,
      page.data.map((found) => found.transaction.currency),
    );
    const version = apiVersionOf(req);
    res.json({
      data: page.data.map((found) => renderReconciliationCase(found, exponents, version)),
      pagination: renderPagination(limit, offset, page.total),
    });
  };

  const listOverdrawnAccounts: RequestHandler = async (req, res) => {
    if (viewerOf(req).role !== 'admin')
      throw accessDenied('Only an administrator may see overdrawn accounts');
    const { limit, offset } = readPage(req);
    const page = await store.listOverdrawnAccounts({ limit, offset });
    const exponents = await exponentsFor(
      currencies,
      page.data.map((account) => account.currency),
    );
    res.json({
      data: page.data.map((account) =>
        renderOverdrawnAccount(account, exponentIn(exponents, account.currency)),
      ),
      pagination: renderPagination(limit, offset, page.total),
    });
  };

  return { listReconciliation, listOverdrawnAccounts };
}
