import type { ApiVersion, WebhookEventType } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { WebhookEndpoint } from '../domain/endpoint.js';
import type { SecretBox } from './secret-box.js';

interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  api_version: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toEndpointWith = (row: EndpointRow, box: SecretBox): WebhookEndpoint => ({
  id: row.id,
  userId: row.user_id,
  url: row.url,
  events: row.events as WebhookEventType[],
  description: row.description,
  enabled: row.enabled,
  apiVersion: row.api_version as ApiVersion,
  secret: box.open(row.secret),
  previousSecret: row.previous_secret === null ? null : box.open(row.previous_secret),
  previousSecretExpiresAt: row.previous_secret_expires_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface NewEndpoint {
  id: string;
  userId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  apiVersion: ApiVersion;
  secret: string;
}

export interface EndpointChanges {
  url?: string;
  events?: WebhookEventType[];
  description?: string;
  enabled?: boolean;
  apiVersion?: ApiVersion;
}

export interface EndpointRepository {
  /** Refused (null) when the user already has `maxPerUser` endpoints; checked under a lock on the user. */
  insert(endpoint: NewEndpoint, maxPerUser: number): Promise<WebhookEndpoint | null>;
  find(id: string): Promise<WebhookEndpoint | null>;
  list(
    scope: { userId?: string },
    page: { limit: number; offset: number },
  ): Promise<{ data: WebhookEndpoint[]; total: number }>;
  update(id: string, changes: EndpointChanges): Promise<WebhookEndpoint | null>;
  rotateSecret(id: string, secret: string, previousExpiresAt: Date): Promise<WebhookEndpoint | null>;
  delete(id: string): Promise<boolean>;
  deleteAllOf(userId: string): Promise<number>;
}

/** Secrets are sealed by `box` on the way in and opened on the way out: the rows never hold them in clear. */
export function createEndpointRepository(knex: Knex, box: SecretBox): EndpointRepository {
  const table = () => knex<EndpointRow>('webhook_endpoints');
  const toEndpoint = (row: EndpointRow) => toEndpointWith(row, box);
  return {
    async insert(endpoint, maxPerUser) {
      return knex.transaction(async (trx) => {
        // One creation per user at a time, so two concurrent ones cannot both pass the limit.
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`webhook-endpoints:${endpoint.userId}`]);
        const [{ count }] = (await trx('webhook_endpoints')
          .where({ user_id: endpoint.userId })
          .count({ count: '*' })) as [{ count: string }];
        if (Number(count) >= maxPerUser) return null;
        const [row] = (await trx('webhook_endpoints')
          .insert({
            id: endpoint.id,
            user_id: endpoint.userId,
            url: endpoint.url,
            events: endpoint.events,
            description: endpoint.description,
            api_version: endpoint.apiVersion,
            secret: box.seal(endpoint.secret),
          })
          .returning('*')) as EndpointRow[];
        return toEndpoint(row as EndpointRow);
      });
    },
    async find(id) {
      const row = await table().where({ id }).first();
      return row ? toEndpoint(row as EndpointRow) : null;
    },
    async list(scope, { limit, offset }) {
      const filtered = () => (scope.userId ? table().where({ user_id: scope.userId }) : table());
      const [rows, [{ total }]] = await Promise.all([
        filtered()
          .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
          .limit(limit)
          .offset(offset),
        filtered().count({ total: '*' }) as unknown as Promise<[{ total: string }]>,
      ]);
      return { data: (rows as EndpointRow[]).map(toEndpoint), total: Number(total) };
    },
    async update(id, changes) {
      const [row] = (await table()
        .where({ id })
        .update({
          url: changes.url,
          events: changes.events,
          description: changes.description,
          enabled: changes.enabled,
          api_version: changes.apiVersion,
          updated_at: knex.fn.now() as unknown as Date,
        })
        .returning('*')) as EndpointRow[];
      return row ? toEndpoint(row) : null;
    },
    async rotateSecret(id, secret, previousExpiresAt) {
      const [row] = (await table()
        .where({ id })
        .update({
          previous_secret: knex.ref('secret') as unknown as string,
          previous_secret_expires_at: previousExpiresAt,
          secret: box.seal(secret),
          updated_at: knex.fn.now() as unknown as Date,
        })
        .returning('*')) as EndpointRow[];
      return row ? toEndpoint(row) : null;
    },
    async delete(id) {
      return (await table().where({ id }).delete()) > 0;
    },
    async deleteAllOf(userId) {
      return table().where({ user_id: userId }).delete();
    },
  };
}
