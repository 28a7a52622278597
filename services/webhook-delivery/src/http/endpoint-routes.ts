import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import {
  NewWebhookEndpointBody,
  RotateSecretBody,
  WebhookDeliveryListQuery,
  WebhookEndpointListQuery,
  WebhookEndpointUpdateBody,
} from '@payments/contracts';
import {
  AppError,
  accessDenied,
  apiVersionOf,
  authRequired,
  bodyValidator,
  notFound,
  queryValidator,
  validationError,
} from '@payments/service-kit';
import type { RequestHandler } from 'express';
import type { DeliveryRepository } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { AddressGuard } from '../delivery/address-guard.js';
import { canManage, newSigningSecret, type Viewer, type WebhookEndpoint } from '../domain/endpoint.js';
import { renderAttempt, renderDelivery, renderEndpoint, renderEndpointWithSecret } from './presenters.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_GRACE_SECONDS = 86_400;

const readNewEndpoint = bodyValidator(NewWebhookEndpointBody);
const readUpdate = bodyValidator(WebhookEndpointUpdateBody);
const readRotation = bodyValidator(RotateSecretBody);
const readEndpointQuery = queryValidator(WebhookEndpointListQuery);
const readDeliveryQuery = queryValidator(WebhookDeliveryListQuery);

export interface EndpointRoutesDeps {
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  guard: AddressGuard;
  maxEndpointsPerUser: number;
  retryWindowMs: number;
  wake: () => void;
}

function viewerOf(req: Request): Viewer {
  if (!req.auth) throw authRequired();
  return { userId: req.auth.userId, role: req.auth.role };
}

/** A path id that is not a UUID names nothing: 404, like a missing resource. */
function pathId(req: Request, name: string, what: string): string {
  const id = req.params[name];
  if (typeof id !== 'string' || !UUID.test(id)) throw notFound(what);
  return id.toLowerCase();
}

export function endpointRoutes(auth: RequestHandler, deps: EndpointRoutesDeps): Router {
  const { endpoints, deliveries, guard } = deps;
  const router = Router();

  const checkUrl = async (url: string) => {
    const verdict = await guard.checkUrl(url);
    if (!verdict.ok)
      throw validationError(
        [{ field: 'url', message: verdict.message }],
        `The endpoint URL ${verdict.message}`,
      );
  };

  /** The endpoint, if the viewer may manage it; another user's is refused like their accounts are (403). */
  const manageable = async (req: Request): Promise<WebhookEndpoint> => {
    const endpoint = await endpoints.find(pathId(req, 'id', 'Webhook endpoint'));
    if (!endpoint) throw notFound('Webhook endpoint');
    if (!canManage(viewerOf(req), endpoint))
      throw accessDenied('This webhook endpoint belongs to another user');
    return endpoint;
  };

  router.post('/webhook-endpoints', auth, async (req, res) => {
    const viewer = viewerOf(req);
    const body = readNewEndpoint(req);
    await checkUrl(body.url);
    const endpoint = await endpoints.insert(
      {
        id: randomUUID(),
        userId: viewer.userId,
        url: body.url,
        events: body.events,
        description: body.description ?? null,
        apiVersion: apiVersionOf(req),
        secret: newSigningSecret(),
      },
      deps.maxEndpointsPerUser,
    );
    if (!endpoint) {
      throw new AppError(
        'BUSINESS_RULE_VIOLATION',
        `A user may have at most ${deps.maxEndpointsPerUser} webhook endpoints`,
      );
    }
    res
      .status(201)
      .location(`/webhook-endpoints/${endpoint.id}`)
      .set('Cache-Control', 'no-store')
      .json(renderEndpointWithSecret(endpoint));
  });

  router.get('/webhook-endpoints', auth, async (req, res) => {
    const viewer = viewerOf(req);
    const { limit, offset, user_id: userId } = readEndpointQuery(req);
    if (userId !== undefined && viewer.role !== 'admin' && userId.toLowerCase() !== viewer.userId) {
      throw accessDenied('Only an administrator may list another user’s webhook endpoints');
    }
    const scope = viewer.role === 'admin' ? { userId: userId?.toLowerCase() } : { userId: viewer.userId };
    const page = await endpoints.list(scope, { limit, offset });
    res.json({
      data: page.data.map((e) => renderEndpoint(e)),
      pagination: { limit, offset, total: page.total },
    });
  });

  router.get('/webhook-endpoints/:id', auth, async (req, res) => {
    res.json(renderEndpoint(await manageable(req)));
  });

  router.put('/webhook-endpoints/:id', auth, async (req, res) => {
    const endpoint = await manageable(req);
    const { api_version: apiVersion, ...changes } = readUpdate(req);
    if (changes.url !== undefined) await checkUrl(changes.url);
    const updated = await endpoints.update(endpoint.id, { ...changes, apiVersion });
    if (!updated) throw notFound('Webhook endpoint');
    if (changes.enabled) deps.wake();
    res.json(renderEndpoint(updated));
  });

  router.delete('/webhook-endpoints/:id', auth, async (req, res) => {
    const endpoint = await manageable(req);
    if (!(await endpoints.delete(endpoint.id))) throw notFound('Webhook endpoint');
    res.status(204).end();
  });

  router.post('/webhook-endpoints/:id/rotate-secret', auth, async (req, res) => {
    const endpoint = await manageable(req);
    // The body is optional.
    const grace = req.body === undefined ? undefined : readRotation(req).grace_period_seconds;
    const expiresAt = new Date(Date.now() + (grace ?? DEFAULT_GRACE_SECONDS) * 1000);
    const rotated = await endpoints.rotateSecret(endpoint.id, newSigningSecret(), expiresAt);
    if (!rotated) throw notFound('Webhook endpoint');
    res.set('Cache-Control', 'no-store').json(renderEndpointWithSecret(rotated));
  });

  router.get('/webhook-endpoints/:id/deliveries', auth, async (req, res) => {
    const endpoint = await manageable(req);
    const { limit, offset, status } = readDeliveryQuery(req);
    const page = await deliveries.list(endpoint.id, { status }, { limit, offset });
    res.json({ data: page.data.map(renderDelivery), pagination: { limit, offset, total: page.total } });
  });

  const deliveryOf = async (req: Request, endpoint: WebhookEndpoint) => {
    const delivery = await deliveries.find(pathId(req, 'deliveryId', 'Delivery'));
    if (!delivery || delivery.endpointId !== endpoint.id) throw notFound('Delivery');
    return delivery;
  };

  router.get('/webhook-endpoints/:id/deliveries/:deliveryId', auth, async (req, res) => {
    const delivery = await deliveryOf(req, await manageable(req));
    const attempts = await deliveries.attemptsOf(delivery.id);
    res.json({ ...renderDelivery(delivery), attempt_log: attempts.map(renderAttempt) });
  });

  router.post('/webhook-endpoints/:id/deliveries/:deliveryId/redeliver', auth, async (req, res) => {
    const delivery = await deliveryOf(req, await manageable(req));
    const again = await deliveries.redeliver(delivery.id, new Date(Date.now() + deps.retryWindowMs));
    if (!again)
      throw new AppError('CONFLICT', 'An attempt of this delivery is in flight; try again when it is over');
    deps.wake();
    res.status(202).json(renderDelivery(again));
  });

  return router;
}
