import { Router, type Request, type RequestHandler } from 'express';
import { AppError, accessDenied, authRequired, notFound } from '@payments/service-kit';
import type { DrillLimits, DrillRepository } from '../data/drill-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { AddressGuard } from '../delivery/address-guard.js';
import { newDrillId } from '../drill/drill-plan.js';
import type { DrillRunner } from '../drill/drill-runner.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The recent event types a drill cycles through, at most. */
const DRILL_EVENT_TYPES = 4;

export interface DrillRoutesDeps {
  endpoints: EndpointRepository;
  drills: DrillRepository;
  guard: AddressGuard;
  runner: DrillRunner;
  limits: DrillLimits;
}

const endpointIdOf = (req: Request): string => {
  const id = req.params.id;
  if (typeof id !== 'string' || !UUID.test(id)) throw notFound('Webhook endpoint');
  return id.toLowerCase();
};

/** POST /webhook-endpoints/{id}/drill: a drill of the endpoint's receiver, answered with its report. */
export function drillRoutes(auth: RequestHandler, deps: DrillRoutesDeps): Router {
  const router = Router();

  router.post('/webhook-endpoints/:id/drill', auth, async (req, res) => {
    if (!req.auth) throw authRequired();
    const { userId, role } = req.auth;
    const endpoint = await deps.endpoints.find(endpointIdOf(req));
    // Owner only. Another user learns nothing of the endpoint; an admin, who may read it, is told why not.
    if (!endpoint || (endpoint.userId !== userId && role !== 'admin')) throw notFound('Webhook endpoint');
    if (endpoint.userId !== userId) {
      throw accessDenied(
        'Only an endpoint’s owner may drill it: the drill signs with the owner’s secret and POSTs to their server',
      );
    }
    if (!endpoint.secrets.open) {
      throw new AppError(
        'INTERNAL_ERROR',
        `This webhook endpoint cannot sign a drill. ${endpoint.secrets.problem}. Rotating its secret mends it.`,
      );
    }
    const drillId = newDrillId();
    const admission = await deps.drills.admit({ id: drillId, endpointId: endpoint.id, userId }, deps.limits);
    if (!admission.admitted) {
      throw new AppError('RATE_LIMIT_EXCEEDED', `${admission.reason}; try again later`, undefined, {
        'Retry-After': String(admission.retryAfterSeconds),
      });
    }
    const verdict = await deps.guard.checkUrl(endpoint.url);
    if (!verdict.ok) {
      throw new AppError(
        'BUSINESS_RULE_VIOLATION',
        `Nothing was sent: the endpoint URL ${verdict.message}, and deliveries to it are refused too`,
      );
    }
    const recent = await deps.drills.recentEventTypes(userId, DRILL_EVENT_TYPES);
    const eventTypes = recent.length > 0 ? recent : endpoint.events.slice(0, DRILL_EVENT_TYPES);
    const report = await deps.runner.run(drillId, { ...endpoint, secrets: endpoint.secrets }, eventTypes);
    res.set('Cache-Control', 'no-store').json(report);
  });

  return router;
}
