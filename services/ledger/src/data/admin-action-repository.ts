import { randomUUID } from 'node:crypto';
import { processOnce, type Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type {
  AdminAction,
  AdminActionFilter,
  AdminActionStore,
  NewAdminAction,
} from '../use-cases/admin-actions.js';
import { readPage } from './pages.js';
import { INBOX_CONSUMER } from './unit-of-work.js';

/** The row is the action but for its timestamp's column name. */
type AdminActionRow = Omit<AdminAction, 'createdAt'> & { created_at: Date };

/**
 * Appends an action to the trail, in the caller's transaction when `knex` is one. An action whose id is there
 * already (an announced one redelivered after its inbox record was pruned) is kept once.
 */
export async function recordAdminAction(knex: Knex, action: NewAdminAction): Promise<void> {
  await knex('admin_actions')
    .insert({
      id: action.id ?? randomUUID(),
      actor: action.actor,
      action: action.action,
      subject: action.subject,
      owner: action.owner,
      reason: action.reason,
      detail: JSON.stringify(action.detail),
      ...(action.createdAt && { created_at: action.createdAt }),
    })
    .onConflict('id')
    .ignore();
}

/** The trail of admin actions, oldest first. */
function listAdminActions(
  knex: Knex,
  filter: AdminActionFilter,
  page: PageRequest,
): Promise<Page<AdminAction>> {
  const scope = () => {
    const query = knex('admin_actions');
    if (filter.actor !== undefined) query.where({ actor: filter.actor });
    if (filter.owner !== undefined) query.where({ owner: filter.owner });
    return query;
  };
  return readPage(knex, scope, page, {
    columns: '*',
    order: [{ column: 'created_at' }, { column: 'id' }],
    toItem: ({ created_at, ...action }: AdminActionRow): AdminAction => ({
      ...action,
      createdAt: created_at,
    }),
  });
}

export function createAdminActionRepository(knex: Knex): AdminActionStore {
  return {
    record: (action) => recordAdminAction(knex, action),
    async recordOnce(eventId, action) {
      await processOnce(knex, INBOX_CONSUMER, eventId, (trx) => recordAdminAction(trx, action));
    },
    list: (filter, page) => listAdminActions(knex, filter, page),
  };
}
