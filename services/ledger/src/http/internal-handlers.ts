import type { RequestHandler } from 'express';
import { notFound } from '@payments/service-kit';
import { pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderAudit, renderHoldings, renderPayment } from './presenters.js';

/** For other services on the internal network (identity's deletion check, operators); the gateway never routes here. */
export function createInternalHandlers({ store }: LedgerHttpDeps) {
  const showHoldings: RequestHandler = async (req, res) => {
    res.json(renderHoldings(await store.holdingsOf(pathId(req, 'User'))));
  };

  const showAudit: RequestHandler = async (_req, res) => {
    res.json(renderAudit(await store.audit()));
  };

  /** What a deposit or withdrawal is for, so webhook-ingest confirms it for exactly that amount and currency. */
  const showPayment: RequestHandler = async (req, res) => {
    const transaction = await store.findTransaction(pathId(req, 'Payment'));
    if (!transaction || transaction.type === 'transfer') throw notFound('Payment');
    res.json(renderPayment(transaction));
  };

  return { showHoldings, showAudit, showPayment };
}
