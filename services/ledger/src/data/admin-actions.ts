import { randomUUID } from 'node:crypto';
import type { Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';

/** An admin's action, as the append-only trail keeps it: who, what, on what, whose, why. */
export interface AdminAction {
  id: string;
  actor: string;
  action: string;
  subject: string;
  /** The user the resource belongs to; null for the platform's own (a dead-letter queue, a provider's record). */
  owner: string | null;
  reason: string | null;
  detail: Record<string, unknown>;
  createdAt: Date;
}

export type NewAdminAction = Omit<AdminAction, 'id' | 'createdAt'> & { id?: string; createdAt?: Date };

/** Narrows the trail to one admin's actions, or to the actions on one user's resources. */
export interface AdminActionFilter {
  actor?: string;
  owner?: string;
}

interface AdminActionRow {
  id: string;
  actor: string;
  action: string;
  subject: string;
  owner: string | null;
  reason: string | null;
  detail: Record<string, unknown>;
  created_at: Date;
}

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
export async function listAdminActions(
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
  const [rows, [count]] = await Promise.all([
    scope()
      .select<AdminActionRow[]>('*')
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.offset),
    scope().count<{ count: string }[]>('*'),
  ]);
  return {
    data: rows.map((row) => ({
      id: row.id,
      actor: row.actor,
      action: row.action,
      subject: row.subject,
      owner: row.owner,
      reason: row.reason,
      detail: row.detail,
      createdAt: row.created_at,
    })),
    total: Number(count?.count ?? 0),
  };
}
