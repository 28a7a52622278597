import type { RequestHandler } from 'express';
import { notFound } from '@payments/service-kit';
import { removalRefused } from '../domain/user-removal.js';
import { pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderAudit, renderPayment } from './presenters.js';

/** For other services on the internal network (identity's user removal, operators); the gateway never routes here. */
export function createInternalHandlers({
  store,
}: LedgerHttpDeps): Record<'removeUser' | 'showAudit' | 'showPayment', RequestHandler> {
  /** Identity's deletion asks the ledger to decide: removed (200), or refused with why (422), nothing changed. */
  const removeUser: RequestHandler = async (req, res) => {
    const userId = pathId(req, 'User');
    const removal = await store.inTransaction((unit) => unit.removeUserIfClear(userId));
    if (!removal.removed) throw removalRefused(removal.obstacles);
    req.log.info(
      { user_id: userId, accounts: removal.accounts, transactions: removal.transactions },
      'removed a user from the ledger',
    );
    res.json({ user_id: userId, accounts: removal.accounts, transactions: removal.transactions });
  };

  const showAudit: RequestHandler = async (_req, res) => {
    res.json(renderAudit(await store.audit()));
  };

  /** What a deposit or withdrawal is for, so webhook-ingest confirms it for exactly that amount and currency. */
  const showPayment: RequestHandler = async (req, res) => {
    const transaction = await store.findTransaction(pathId(req, 'Payment'));
    const payment = transaction?.type === 'deposit' || transaction?.type === 'withdrawal';
    if (!transaction || !payment) throw notFound('Payment');
    res.json(renderPayment(transaction));
  };

  return { removeUser, showAudit, showPayment };
}
