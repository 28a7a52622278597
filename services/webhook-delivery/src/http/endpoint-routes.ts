import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import {
  AdminReasonBody,
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
  pageRequestOf,
  queryValidator,
  renderPage,
  validationError,
  type AdminAction,
  type AdminTrail,
} from '@payments/service-kit';
import type { RequestHandler } from 'express';
import type { DeliveryRepository } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { AddressGuard } from '../delivery/address-guard.js';
import {
  accessTo,
  newSigningSecret,
  refusedToAdmin,
  type Viewer,
  type WebhookEndpoint,
} from '../domain/endpoint.js';
import { renderAttempt, renderDelivery, renderEndpoint, renderEndpointWithSecret } from './presenters.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_GRACE_SECONDS = 86_400;

const readNewEndpoint = bodyValidator(NewWebhookEndpointBody);
const readUpdate = bodyValidator(WebhookEndpointUpdateBody);
const readRotation = bodyValidator(RotateSecretBody);
const readReason = bodyValidator(AdminReasonBody);
const readEndpointQuery = queryValidator(WebhookEndpointListQuery);
const readDeliveryQuery = queryValidator(WebhookDeliveryListQuery);

export interface EndpointRoutesDeps {
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  guard: AddressGuard;
  maxEndpointsPerUser: number;
  retryWindowMs: number;
  wake: () => void;
  /** Where an admin's action on another user's endpoint is recorded before it commits (ADR 0096). */
  trail: AdminTrail;
}

/** An endpoint in hand, and whether its viewer acts on it as its owner or as an admin on someone else's. */
interface Managed {
  endpoint: WebhookEndpoint;
  viewer: Viewer;
  byAdmin: boolean;
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

  /**
   * The endpoint, if the viewer may manage it: its owner, or an admin (who may do less, see the routes); another
   * user's is refused like their accounts are (403).
   */
  const manageable = async (req: Request): Promise<Managed> => {
    const viewer = viewerOf(req);
    const endpoint = await endpoints.find(pathId(req, 'id', 'Webhook endpoint'));
    if (!endpoint) throw notFound('Webhook endpoint');
    const access = accessTo(viewer, endpoint);
    if (access === 'none') throw accessDenied('This webhook endpoint belongs to another user');
    return { endpoint, viewer, byAdmin: access === 'admin' };
  };

  /** The admin's action on another user's endpoint, recorded in the change's transaction; nothing for an owner. */
  const recorded = (req: Request, managed: Managed, action: Omit<AdminAction, 'actor' | 'owner'>) =>
    managed.byAdmin
      ? () =>
          deps.trail.record(
            { ...action, actor: managed.viewer.userId, owner: managed.endpoint.userId },
            String(req.id),
          )
      : undefined;

  /** An optional body whose only field is an admin's reason. */
  const reasonOf = (req: Request): string | null =>
    req.body === undefined ? null : (readReason(req).reason ?? null);

  router.post('/webhook-endpoints', auth, async (req, res) => {
    const viewer = viewerOf(req);
    const body = readNewEndpoint(req);
    await checkUrl(body.url);
    const secret = newSigningSecret();
    // Always the caller's own: nobody, an admin included, makes an endpoint (and learns its secret) for another.
    const endpoint = await endpoints.insert(
      {
        id: randomUUID(),
        userId: viewer.userId,
        url: body.url,
        events: body.events,
        description: body.description ?? null,
        apiVersion: apiVersionOf(req),
        secret,
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
      .json(renderEndpointWithSecret(endpoint, secret));
  });

  router.get('/webhook-endpoints', auth, async (req, res) => {
    const viewer = viewerOf(req);
    const query = readEndpointQuery(req);
    const userId = query.user_id;
    if (userId !== undefined && viewer.role !== 'admin' && userId.toLowerCase() !== viewer.userId) {
      throw accessDenied('Only an administrator may list another user’s webhook endpoints');
    }
    const scope = viewer.role === 'admin' ? { userId: userId?.toLowerCase() } : { userId: viewer.userId };
    const request = pageRequestOf(query);
    const page = await endpoints.list(scope, request);
    res.json(renderPage(page, request, (e) => renderEndpoint(e)));
  });

  router.get('/webhook-endpoints/:id', auth, async (req, res) => {
    const { endpoint } = await manageable(req);
    // Said here, where its owner looks: the list shows it like the others, and its deliveries wait.
    if (!endpoint.secrets.open) {
      throw new AppError(
        'INTERNAL_ERROR',
        `This webhook endpoint cannot sign its deliveries, which wait until it can. ${endpoint.secrets.problem}.`,
      );
    }
    res.json(renderEndpoint(endpoint));
  });

  router.put('/webhook-endpoints/:id', auth, async (req, res) => {
    const managed = await manageable(req);
    const { endpoint } = managed;
    const { api_version: apiVersion, reason, ...changes } = readUpdate(req);
    if (Object.keys(changes).length === 0 && apiVersion === undefined) {
      throw validationError(
        [{ field: '(body)', message: 'names nothing to change' }],
        'Give at least one of url, events, description, enabled and api_version to change',
      );
    }
    if (managed.byAdmin) {
      const refused = refusedToAdmin({ ...changes, api_version: apiVersion });
      if (refused.length > 0) {
        throw accessDenied(
          'An administrator may only enable or disable another user’s webhook endpoint: where its events go, ' +
            `which ones, how they are rendered and signed are its owner’s to decide (refused: ${refused.join(', ')})`,
        );
      }
    }
    if (changes.url !== undefined) await checkUrl(changes.url);
    const updated = await endpoints.update(
      endpoint.id,
      { ...changes, apiVersion },
      recorded(req, managed, {
        action: changes.enabled ? 'webhook_endpoint.enable' : 'webhook_endpoint.disable',
        subject: `webhook_endpoint:${endpoint.id}`,
        reason: reason ?? null,
        detail: { enabled: { from: endpoint.enabled, to: changes.enabled } },
      }),
    );
    if (!updated) throw notFound('Webhook endpoint');
    if (changes.enabled) deps.wake();
    res.json(renderEndpoint(updated));
  });

  router.delete('/webhook-endpoints/:id', auth, async (req, res) => {
    const managed = await manageable(req);
    const { endpoint } = managed;
    const deleted = await endpoints.delete(
      endpoint.id,
      recorded(req, managed, {
        action: 'webhook_endpoint.delete',
        subject: `webhook_endpoint:${endpoint.id}`,
        reason: reasonOf(req),
        detail: { url: endpoint.url, events: endpoint.events },
      }),
    );
    if (!deleted) throw notFound('Webhook endpoint');
    res.status(204).end();
  });

  router.post('/webhook-endpoints/:id/rotate-secret', auth, async (req, res) => {
    const { endpoint, byAdmin } = await manageable(req);
    if (byAdmin) {
      throw accessDenied(
        'An administrator may not rotate another user’s signing secret: whoever holds it can sign events that ' +
          'user’s server trusts. Only the endpoint’s owner rotates it',
      );
    }
    // The body is optional.
    const grace = req.body === undefined ? undefined : readRotation(req).grace_period_seconds;
    const expiresAt = new Date(Date.now() + (grace ?? DEFAULT_GRACE_SECONDS) * 1000);
    const secret = newSigningSecret();
    const rotated = await endpoints.rotateSecret(endpoint.id, secret, expiresAt);
    if (!rotated) throw notFound('Webhook endpoint');
    res.set('Cache-Control', 'no-store').json(renderEndpointWithSecret(rotated, secret));
  });

  router.get('/webhook-endpoints/:id/deliveries', auth, async (req, res) => {
    const { endpoint } = await manageable(req);
    const query = readDeliveryQuery(req);
    const request = pageRequestOf(query);
    const page = await deliveries.list(endpoint.id, { status: query.status }, request);
    res.json(renderPage(page, request, renderDelivery));
  });

  const deliveryOf = async (req: Request, endpoint: WebhookEndpoint) => {
    const delivery = await deliveries.find(pathId(req, 'deliveryId', 'Delivery'));
    if (!delivery || delivery.endpointId !== endpoint.id) throw notFound('Delivery');
    return delivery;
  };

  router.get('/webhook-endpoints/:id/deliveries/:deliveryId', auth, async (req, res) => {
    const delivery = await deliveryOf(req, (await manageable(req)).endpoint);
    const attempts = await deliveries.attemptsOf(delivery.id);
    res.json({ ...renderDelivery(delivery), attempt_log: attempts.map(renderAttempt) });
  });

  router.post('/webhook-endpoints/:id/deliveries/:deliveryId/redeliver', auth, async (req, res) => {
    const managed = await manageable(req);
    const delivery = await deliveryOf(req, managed.endpoint);
    const record = recorded(req, managed, {
      action: 'webhook_delivery.redeliver',
      subject: `webhook_delivery:${delivery.id}`,
      reason: reasonOf(req),
      detail: {
        endpoint_id: managed.endpoint.id,
        event_id: delivery.eventId,
        event_type: delivery.eventType,
      },
    });
    const again = await deliveries.redeliver(delivery.id, new Date(Date.now() + deps.retryWindowMs), record);
    if (!again)
      throw new AppError('CONFLICT', 'An attempt of this delivery is in flight; try again when it is over');
    deps.wake();
    res.status(202).json(renderDelivery(again));
  });

  return router;
}
