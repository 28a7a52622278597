import { Router } from 'express';
import { notFound } from '@payments/service-kit';
import type { TransactionActivityRepository } from '../data/transaction-activity-repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The most events one read answers: a timeline's part (ADR 0126). */
const EVENTS_LIMIT = 200;

/**
 * Reads for the other services, behind the service credential (`/internal`, checked by the app for every path):
 * a transaction's events and their deliveries, for the ledger's timeline, which asks only for admins.
 */
export function internalRoutes(deps: { activity: TransactionActivityRepository }): Router {
  const router = Router();
  router.get('/internal/transactions/:id/webhook-events', async (req, res) => {
    const id = req.params.id;
    if (!UUID.test(id)) throw notFound('Transaction');
    const found = await deps.activity.findAbout(id.toLowerCase(), EVENTS_LIMIT);
    res.set('Cache-Control', 'no-store').json({ data: found.data, has_more: found.hasMore });
  });
  return router;
}
