import type { Express, RequestHandler } from 'express';
import { createAccountHandlers } from './account-handlers.js';
import { createAdminHandlers } from './admin-handlers.js';
import { createAdminTransactionHandlers } from './admin-transaction-handlers.js';
import { createInternalHandlers } from './internal-handlers.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { createMoneyHandlers } from './money-handlers.js';
import { createPayoutAccountHandlers } from './payout-account-handlers.js';
import { createRefundHandlers } from './refund-handlers.js';
import { createStatementHandlers } from './statement-handlers.js';
import { createTransactionHandlers } from './transaction-handlers.js';

export function mountLedgerRoutes(app: Express, auth: RequestHandler, deps: LedgerHttpDeps): void {
  const accounts = createAccountHandlers(deps);
  const money = createMoneyHandlers(deps);
  const transactions = createTransactionHandlers(deps);
  const internal = createInternalHandlers(deps);
  const admin = createAdminHandlers(deps);
  const statements = createStatementHandlers(deps);
  const payoutAccounts = createPayoutAccountHandlers(deps);
  const refunds = createRefundHandlers(deps);
  const adminTransactions = createAdminTransactionHandlers(deps);

  app.post('/account', auth, accounts.openAccount);
  app.get('/accounts', auth, accounts.listAccounts);
  app.get('/account/:id', auth, accounts.showAccount);
  app.get('/account/:id/balance', auth, statements.showBalance);
  app.get('/account/:id/statement', auth, statements.showStatement);
  app.get('/account/:id/transactions', auth, transactions.listAccountTransactions);
  app.post('/account/:id/deposit', auth, money.deposit);
  app.post('/account/:id/withdraw', auth, money.withdraw);
  app.post('/account/:id/transfer', auth, money.transfer);
  app.post('/payout-account', auth, payoutAccounts.linkPayoutAccount);
  app.get('/payout-account', auth, payoutAccounts.showPayoutAccount);
  app.put('/payout-account', auth, payoutAccounts.replacePayoutAccount);
  app.get('/transactions', auth, transactions.listTransactions);
  app.get('/transaction/:id', auth, transactions.showTransaction);
  app.post('/transaction/:id/refund', auth, refunds.refund);

  app.get('/admin/reconciliation', auth, admin.listReconciliation);
  app.post('/admin/reconciliation/runs', auth, admin.runReconciliation);
  app.get('/admin/reconciliation/cases/:id', auth, admin.showReconciliationCase);
  app.post('/admin/reconciliation/cases/:id/resolution', auth, admin.resolveReconciliationCase);
  app.get('/admin/actions', auth, admin.listAdminActions);
  app.get('/admin/overdrawn-accounts', auth, admin.listOverdrawnAccounts);
  app.get('/admin/accounts', auth, accounts.findAccounts);
  app.get('/admin/overview', auth, admin.showOverview);
  app.get('/admin/chargeback-exposure', auth, admin.showChargebackExposure);
  app.get('/admin/transactions', auth, adminTransactions.findTransactions);
  app.get('/admin/transactions/:id/timeline', auth, adminTransactions.showTimeline);

  app.post('/internal/users/:id/removal', internal.removeUser);
  app.get('/internal/audit', internal.showAudit);
  app.get('/internal/payments/:id', internal.showPayment);
  app.get('/internal/transactions/:id', internal.renderTransaction);
  app.get('/internal/accounts/:id', internal.renderAccount);
}
