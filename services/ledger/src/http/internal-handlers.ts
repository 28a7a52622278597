import type { RequestHandler } from 'express';
import { apiVersionOf } from '@payments/service-kit';
import { currencyUnitOf, exponentsFor } from '../use-cases/currencies.js';
import { pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderAccount, renderAudit, renderPayment, renderTransaction } from './presenters.js';

/** For other services on the internal network (identity's user removal, operators); the gateway never routes here. */
export function createInternalHandlers({
  accounts,
  transactions,
  maintenance,
  currencies,
}: LedgerHttpDeps): Record<
  'removeUser' | 'showAudit' | 'showPayment' | 'renderTransaction' | 'renderAccount',
  RequestHandler
> {
  /** Identity's deletion asks the ledger to decide: removed (200), or refused with why (422), nothing changed. */
  const removeUser: RequestHandler = async (req, res) => {
    const userId = pathId(req, 'User');
    const removed = await accounts.removeUser(userId, req.log);
    res.json({ user_id: userId, accounts: removed.accounts, transactions: removed.transactions });
  };

  const showAudit: RequestHandler = async (_req, res) => {
    res.json(renderAudit(await maintenance.audit()));
  };

  /** What a deposit or withdrawal is for, so webhook-ingest confirms it for exactly that amount and currency. */
  const showPayment: RequestHandler = async (req, res) => {
    res.json(renderPayment(await transactions.findPayment(pathId(req, 'Payment'))));
  };

  /**
   * A transaction as the public API renders it at X-API-Version, for webhook-delivery's event payloads: with the
   * owner's metadata and reference only when `for_user` names its owner, whose endpoint the payload goes to.
   */
  const showTransaction: RequestHandler = async (req, res) => {
    const transaction = await transactions.find(pathId(req, 'Transaction'));
    const codes = [
      transaction.currency,
      ...(transaction.convertedCurrency ? [transaction.convertedCurrency] : []),
    ];
    const exponents = await exponentsFor(currencies, codes);
    const forUser = typeof req.query.for_user === 'string' ? req.query.for_user.toLowerCase() : null;
    const owned = forUser !== null && transaction.userId === forUser;
    res.json(renderTransaction(transaction, exponents, apiVersionOf(req), owned));
  };

  /** An account as the public API renders it, for webhook-delivery's event payloads. */
  const showAccount: RequestHandler = async (req, res) => {
    const account = await accounts.find(pathId(req, 'Account'));
    res.json(renderAccount(account, (await currencyUnitOf(currencies, account.currency)).exponent));
  };

  return {
    removeUser,
    showAudit,
    showPayment,
    renderTransaction: showTransaction,
    renderAccount: showAccount,
  };
}
