import type { ApiVersion, WebhookEventType } from '@payments/contracts';
import type { Knex, Page, PageRequest } from '@payments/service-kit';
import { isInGracePeriod, type EndpointSecrets, type WebhookEndpoint } from '../domain/endpoint.js';
import { readNewestFirst } from './pages.js';
import { UnknownSecretKeyError, type SecretBox } from './secret-box.js';

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

/** Why a stored secret does not open, said for its endpoint alone. */
function problemOpening(error: unknown): string {
  if (error instanceof UnknownSecretKeyError) return `Its signing secret is ${error.message}`;
  return `Its signing secret cannot be opened (${error instanceof Error ? error.message : String(error)})`;
}

/** The secrets that sign now, opened; one that will not open fails its own endpoint, never a list of them. */
function openSecrets(row: EndpointRow, box: SecretBox, now = new Date()): EndpointSecrets {
  try {
    const previousSigns =
      row.previous_secret !== null && isInGracePeriod(row.previous_secret_expires_at, now);
    return {
      open: true,
      secret: box.open(row.secret),
      previousSecret: previousSigns ? box.open(row.previous_secret as string) : null,
    };
  } catch (error) {
    return { open: false, problem: problemOpening(error) };
  }
}

const toEndpointWith = (row: EndpointRow, box: SecretBox): WebhookEndpoint => ({
  id: row.id,
  userId: row.user_id,
  url: row.url,
  events: row.events as WebhookEventType[],
  description: row.description,
  enabled: row.enabled,
  apiVersion: row.api_version as ApiVersion,
  secrets: openSecrets(row, box),
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

/**
 * Runs in the change's transaction, with the changed endpoint, before it commits: throwing undoes the change (an
 * admin's action the trail of admin actions could not take).
 */
export type BeforeCommit = (endpoint: WebhookEndpoint) => Promise<void>;

/** What re-sealing found: secrets moved under the newest key, those already there, and those no key opens. */
export interface ResealReport {
  resealed: number;
  current: number;
  unopenable: { endpointId: string; problem: string }[];
}

export interface EndpointRepository {
  /** Refused (null) when the user already has `maxPerUser` endpoints; checked under a lock on the user. */
  insert(endpoint: NewEndpoint, maxPerUser: number): Promise<WebhookEndpoint | null>;
  find(id: string): Promise<WebhookEndpoint | null>;
  list(scope: { userId?: string }, page: PageRequest): Promise<Page<WebhookEndpoint>>;
  update(id: string, changes: EndpointChanges, beforeCommit?: BeforeCommit): Promise<WebhookEndpoint | null>;
  /**
   * The new secret signs from now; the current one keeps signing until `previousExpiresAt`, unless it cannot be
   * opened (sealed under a key no longer configured): then only the new one signs.
   */
  rotateSecret(id: string, secret: string, previousExpiresAt: Date): Promise<WebhookEndpoint | null>;
  delete(id: string, beforeCommit?: BeforeCommit): Promise<boolean>;
  deleteAllOf(userId: string): Promise<number>;
  /**
   * Seals every stored secret, current and previous, under the newest key (the first configured), in batches of
   * endpoints locked while they change; afterwards the older keys open nothing that is stored.
   */
  resealSecrets(options?: { batchSize?: number }): Promise<ResealReport>;
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
    async list(scope, page) {
      const filtered = () => (scope.userId ? table().where({ user_id: scope.userId }) : table());
      return readNewestFirst(knex, filtered, page, toEndpoint);
    },
    async update(id, changes, beforeCommit) {
      return knex.transaction(async (trx) => {
        const [row] = (await trx<EndpointRow>('webhook_endpoints')
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
        if (!row) return null;
        const updated = toEndpoint(row);
        await beforeCommit?.(updated);
        return updated;
      });
    },
    async rotateSecret(id, secret, previousExpiresAt) {
      return knex.transaction(async (trx) => {
        const current = (await trx<EndpointRow>('webhook_endpoints').where({ id }).forUpdate().first()) as
          EndpointRow | undefined;
        if (!current) return null;
        // A secret no configured key opens cannot sign anything: it is dropped rather than kept as the previous.
        const keepsSigning = toEndpoint(current).secrets.open;
        const [row] = (await trx<EndpointRow>('webhook_endpoints')
          .where({ id })
          .update({
            previous_secret: keepsSigning ? current.secret : null,
            previous_secret_expires_at: keepsSigning ? previousExpiresAt : null,
            secret: box.seal(secret),
            updated_at: knex.fn.now() as unknown as Date,
          })
          .returning('*')) as EndpointRow[];
        return toEndpoint(row as EndpointRow);
      });
    },
    async delete(id, beforeCommit) {
      return knex.transaction(async (trx) => {
        const [row] = (await trx<EndpointRow>('webhook_endpoints')
          .where({ id })
          .delete()
          .returning('*')) as EndpointRow[];
        if (!row) return false;
        await beforeCommit?.(toEndpoint(row));
        return true;
      });
    },
    async deleteAllOf(userId) {
      return table().where({ user_id: userId }).delete();
    },
    async resealSecrets({ batchSize = 100 } = {}) {
      const report: ResealReport = { resealed: 0, current: 0, unopenable: [] };
      const now = new Date();
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        const rows = await knex.transaction(async (trx) => {
          const batch = (await trx<EndpointRow>('webhook_endpoints')
            .select('id', 'secret', 'previous_secret', 'previous_secret_expires_at')
            .where('id', '>', after)
            .orderBy('id')
            .limit(batchSize)
            .forUpdate()) as EndpointRow[];
          for (const row of batch) {
            // A previous secret past its grace period signs nothing: dropped rather than carried on.
            const previousSigns =
              row.previous_secret !== null && isInGracePeriod(row.previous_secret_expires_at, now);
            let changes: Partial<EndpointRow>;
            try {
              const secret = box.reseal(row.secret);
              const previous = previousSigns ? box.reseal(row.previous_secret as string) : null;
              changes = {
                ...(secret !== null && { secret }),
                ...(previous !== null && { previous_secret: previous }),
                ...(row.previous_secret !== null &&
                  !previousSigns && { previous_secret: null, previous_secret_expires_at: null }),
              };
            } catch (error) {
              report.unopenable.push({ endpointId: row.id, problem: problemOpening(error) });
              continue;
            }
            if (Object.keys(changes).length === 0) {
              report.current += 1;
              continue;
            }
            await trx('webhook_endpoints').where({ id: row.id }).update(changes);
            report.resealed += 1;
          }
          return batch;
        });
        const last = rows[rows.length - 1];
        if (!last || rows.length < batchSize) return report;
        after = last.id;
      }
    },
  };
}
