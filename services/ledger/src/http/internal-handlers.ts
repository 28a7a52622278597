import type { RequestHandler } from 'express';
import { pathId } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderAudit, renderHoldings } from './presenters.js';

/** For other services on the internal network (identity's deletion check, operators); the gateway never routes here. */
export function createInternalHandlers({ store }: LedgerHttpDeps) {
  const showHoldings: RequestHandler = async (req, res) => {
    res.json(renderHoldings(await store.holdingsOf(pathId(req, 'User'))));
  };

  const showAudit: RequestHandler = async (_req, res) => {
    res.json(renderAudit(await store.audit()));
  };

  return { showHoldings, showAudit };
}
