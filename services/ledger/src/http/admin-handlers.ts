import type { RequestHandler } from 'express';
import {
  AdminActionQuery,
  ChargebackExposureQuery,
  OverviewQuery,
  PageQuery,
  ReconciliationDecisionRequest,
  ReconciliationQuery,
} from '@payments/contracts';
import {
  apiVersionOf,
  bodyValidator,
  pageRequestOf,
  queryValidator,
  renderPage,
} from '@payments/service-kit';
import { exponentsFor } from '../use-cases/currencies.js';
import type { ReconciliationCaseRecord } from '../use-cases/reconciliation.js';
import { adminOf, pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import {
  exponentIn,
  renderAdminAction,
  renderChargebackExposure,
  renderExposure,
  renderMismatchCase,
  renderOverdrawnAccount,
  renderOverview,
  renderPagination,
  renderPlatformLoss,
  renderReconciliationCsv,
  renderUnconfirmedWithdrawal,
  type Exponents,
} from './presenters.js';

const readPage = queryValidator(PageQuery);
const readAdminActionQuery = queryValidator(AdminActionQuery);
const readReconciliationQuery = queryValidator(ReconciliationQuery);
const readDecision = bodyValidator(ReconciliationDecisionRequest);
const readOverviewQuery = queryValidator(OverviewQuery);
const readExposureQuery = queryValidator(ChargebackExposureQuery);

type AdminHandler =
  | 'listReconciliation'
  | 'showReconciliationCase'
  | 'resolveReconciliationCase'
  | 'runReconciliation'
  | 'listAdminActions'
  | 'listOverdrawnAccounts'
  | 'showOverview'
  | 'showChargebackExposure';

/** Operators' views of the ledger and their decisions, through the gateway with an admin token. */
export function createAdminHandlers({
  reversals,
  adminActions,
  currencies,
  reconciliation,
  overviews,
  chargebackExposure,
}: LedgerHttpDeps): Record<AdminHandler, RequestHandler> {
  /** A case's currency may be one the catalogue does not serve (money unknown to the ledger): ISO's 2 then. */
  const caseExponents = async (codes: Iterable<string>): Promise<Exponents> => {
    const unique = [...new Set(codes)];
    const found = await Promise.all(unique.map((code) => currencies.find(code)));
    return new Map(unique.map((code, i) => [code, found[i]?.exponent ?? 2]));
  };
  const renderCase = async (found: ReconciliationCaseRecord) =>
    renderMismatchCase(found, exponentIn(await caseExponents([found.currency]), found.currency));

  /**
   * What waits for an operator: withdrawals awaiting their confirmation, then the open mismatches with the
   * provider's records, as one list paged across both, by offset or by cursor (an id of either kind);
   * `format=csv`: the whole of it as a report.
   */
  const listReconciliation: RequestHandler = async (req, res) => {
    adminOf(req, 'see reconciliation');
    const query = readReconciliationQuery(req);
    if (query.format === 'csv') {
      const { withdrawals, cases } = await reconciliation.report();
      const exponents = await caseExponents([
        ...withdrawals.map((found) => found.transaction.currency),
        ...cases.map((found) => found.currency),
      ]);
      res
        .type('text/csv; charset=utf-8')
        .set('Cache-Control', 'no-store')
        .set(
          'Content-Disposition',
          `attachment; filename="reconciliation-${new Date().toISOString().slice(0, 10)}.csv"`,
        )
        .send(renderReconciliationCsv(withdrawals, cases, exponents));
      return;
    }
    const request = pageRequestOf(query);
    const { withdrawals, cases, total, hasMore } = await reconciliation.waiting(request);
    const exponents = await exponentsFor(
      currencies,
      withdrawals.map((found) => found.transaction.currency),
    );
    const caseUnits = await caseExponents(cases.map((found) => found.currency));
    const version = apiVersionOf(req);
    res.json({
      data: [
        ...withdrawals.map((found) => renderUnconfirmedWithdrawal(found, exponents, version)),
        ...cases.map((found) => renderMismatchCase(found, exponentIn(caseUnits, found.currency))),
      ],
      has_more: hasMore ?? request.offset + withdrawals.length + cases.length < total,
      pagination: renderPagination(request.limit, request.offset, total),
    });
  };

  const showReconciliationCase: RequestHandler = async (req, res) => {
    adminOf(req, 'see reconciliation');
    res.json(await renderCase(await reconciliation.findCase(pathId(req, 'Reconciliation case'))));
  };

  /** An admin's decision on a case: `book` what the provider's records say, or `nothing_owed`; with a reason. */
  const resolveReconciliationCase: RequestHandler = async (req, res) => {
    const admin = adminOf(req, 'decide reconciliation cases');
    const { decision, reason } = readDecision(req);
    const decided = await reconciliation.withProvider().resolve(pathId(req, 'Reconciliation case'), {
      decision,
      reason,
      actor: admin.userId,
    });
    res.json(await renderCase(decided));
  };

  /** Reconciles now, rather than at the next interval. */
  const runReconciliation: RequestHandler = async (req, res) => {
    adminOf(req, 'run reconciliation');
    res.json(await reconciliation.withProvider().run());
  };

  const listAdminActions: RequestHandler = async (req, res) => {
    adminOf(req, 'read the trail of admin actions');
    const query = readAdminActionQuery(req);
    const request = pageRequestOf(query);
    const page = await adminActions.list(
      { actor: query.actor?.toLowerCase(), owner: query.owner?.toLowerCase() },
      request,
    );
    res.json(renderPage(page, request, renderAdminAction));
  };

  /**
   * The accounts reversals took below zero (a page of them), and per currency what live users owe back next to
   * what the platform lost for good on removed users' deposits, with those losses.
   */
  const listOverdrawnAccounts: RequestHandler = async (req, res) => {
    adminOf(req, 'see overdrawn accounts');
    const request = pageRequestOf(readPage(req));
    const { accounts: page, overdrawn, lossTotals, losses } = await reversals.overdrawn(request);
    const exponents = await exponentsFor(currencies, [
      ...page.data.map((account) => account.currency),
      ...overdrawn.map((total) => total.currency),
      ...lossTotals.map((total) => total.currency),
    ]);
    res.json({
      ...renderPage(page, request, (account) =>
        renderOverdrawnAccount(account, exponentIn(exponents, account.currency)),
      ),
      by_currency: renderExposure(overdrawn, lossTotals, exponents),
      platform_losses: losses.map((loss) => renderPlatformLoss(loss, exponentIn(exponents, loss.currency))),
    });
  };

  /** Activity for charts and the platform's gauges; what could not be read in time is named in `missing`. */
  const showOverview: RequestHandler = async (req, res) => {
    adminOf(req, 'see the overview');
    const { window } = readOverviewQuery(req);
    res.set('Cache-Control', 'no-store').json(renderOverview(await overviews.read(window), new Date()));
  };

  const showChargebackExposure: RequestHandler = async (req, res) => {
    adminOf(req, 'see the chargeback exposure');
    const { limit, currency } = readExposureQuery(req);
    const report = await chargebackExposure.read({ limit, currency });
    const exponents = await exponentsFor(
      currencies,
      report.totals.map((total) => total.currency),
    );
    res.set('Cache-Control', 'no-store').json(renderChargebackExposure(report, exponents));
  };

  return {
    showOverview,
    showChargebackExposure,
    listReconciliation,
    showReconciliationCase,
    resolveReconciliationCase,
    runReconciliation,
    listAdminActions,
    listOverdrawnAccounts,
  };
}
