import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type {
  AdminReasonRequest,
  NewWebhookEndpointRequest,
  Page,
  RotateSecretRequest,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryListQuery,
  WebhookDrill,
  WebhookEndpoint,
  WebhookEndpointListQuery,
  WebhookEndpointUpdateRequest,
  WebhookEndpointWithSecret,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

/** Where the system POSTs events about your transactions, accounts and user; verify them with `verifyWebhookEvent`. */
export function webhookEndpointsResource({ transport }: ResourceDeps) {
  const listPage = async (query: WebhookEndpointListQuery = {}, options?: RequestOptions) =>
    transport.body<Page<WebhookEndpoint>>('listWebhookEndpoints', { query, options });
  const deliveriesPage = async (
    endpointId: string,
    query: WebhookDeliveryListQuery = {},
    options?: RequestOptions,
  ) =>
    transport.body<Page<WebhookDelivery>>('listWebhookDeliveries', {
      params: { id: endpointId },
      query,
      options,
    });

  return {
    /** Registers an endpoint; the answer holds its signing `secret`, shown this once. Objects in its events are
     * rendered at this client's API version. */
    async create(
      endpoint: NewWebhookEndpointRequest,
      options?: RequestOptions,
    ): Promise<WebhookEndpointWithSecret> {
      return transport.body<WebhookEndpointWithSecret>('createWebhookEndpoint', { body: endpoint, options });
    },
    list: (query: WebhookEndpointListQuery = {}, options?: RequestOptions): PagedList<WebhookEndpoint> =>
      pagedList((window) => listPage({ ...query, ...window }, options), query),
    listPage,
    async get(endpointId: string, options?: RequestOptions): Promise<WebhookEndpoint> {
      return transport.body<WebhookEndpoint>('getWebhookEndpoint', { params: { id: endpointId }, options });
    },
    /**
     * A partial update: url, events, description, enabled, api_version. An admin may only enable or disable
     * another user's endpoint (with an optional `reason`).
     */
    async update(
      endpointId: string,
      changes: WebhookEndpointUpdateRequest,
      options?: RequestOptions,
    ): Promise<WebhookEndpoint> {
      return transport.body<WebhookEndpoint>('updateWebhookEndpoint', {
        params: { id: endpointId },
        body: changes,
        options,
      });
    },
    /** Deletes an endpoint; an admin deleting another user's may say why (`reason`, kept in the trail). */
    async delete(
      endpointId: string,
      removal: AdminReasonRequest = {},
      options?: RequestOptions,
    ): Promise<void> {
      await transport.call<void>('deleteWebhookEndpoint', {
        params: { id: endpointId },
        ...(removal.reason !== undefined && { body: removal }),
        options,
      });
    },
    /** A new secret; the old one keeps signing too for the grace period (default 24 h). */
    async rotateSecret(
      endpointId: string,
      rotation: RotateSecretRequest = {},
      options?: RequestOptions,
    ): Promise<WebhookEndpointWithSecret> {
      return transport.body<WebhookEndpointWithSecret>('rotateWebhookEndpointSecret', {
        params: { id: endpointId },
        body: rotation,
        options,
      });
    },
    /**
     * Drills the endpoint's receiver: signed drill events (a valid one, a duplicate, two out of order, a stale and
     * a forged one) sent like real deliveries, and the report of how it answered each. Owner only; rate limited.
     */
    async drill(endpointId: string, options?: RequestOptions): Promise<WebhookDrill> {
      return transport.body<WebhookDrill>('drillWebhookEndpoint', { params: { id: endpointId }, options });
    },
    deliveries: {
      /** An endpoint's delivery log, newest first, every page. */
      list: (
        endpointId: string,
        query: WebhookDeliveryListQuery = {},
        options?: RequestOptions,
      ): PagedList<WebhookDelivery> =>
        pagedList((window) => deliveriesPage(endpointId, { ...query, ...window }, options), query),
      listPage: deliveriesPage,
      /** A delivery with each of its attempts. */
      async get(
        endpointId: string,
        deliveryId: string,
        options?: RequestOptions,
      ): Promise<WebhookDeliveryDetail> {
        return transport.body<WebhookDeliveryDetail>('getWebhookDelivery', {
          params: { id: endpointId, delivery_id: deliveryId },
          options,
        });
      },
      /**
       * Sends a delivery again now, with a fresh retry window (409 while an attempt is in flight); an admin doing
       * so for another user may say why (`reason`, kept in the trail of admin actions).
       */
      async redeliver(
        endpointId: string,
        deliveryId: string,
        redelivery: AdminReasonRequest = {},
        options?: RequestOptions,
      ): Promise<WebhookDelivery> {
        return transport.body<WebhookDelivery>('redeliverWebhook', {
          params: { id: endpointId, delivery_id: deliveryId },
          ...(redelivery.reason !== undefined && { body: redelivery }),
          options,
        });
      },
    },
  };
}
