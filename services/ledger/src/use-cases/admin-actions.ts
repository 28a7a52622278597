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

/** The append-only trail of admin actions: the ledger's own, and those the other services announce (ADR 0096). */
export interface AdminActions {
  record(action: NewAdminAction): Promise<void>;
  /** Keeps an action another service announced (AdminActionTaken), once however often its event arrives. */
  recordAnnounced(event: { eventId: string; occurredAt: Date; action: NewAdminAction }): Promise<void>;
  /** The trail, oldest first. */
  list(filter: AdminActionFilter, page: PageRequest): Promise<Page<AdminAction>>;
}

export interface AdminActionStore {
  record(action: NewAdminAction): Promise<void>;
  /** Records the action under the event's id, in one database transaction with the event's inbox record. */
  recordOnce(eventId: string, action: NewAdminAction): Promise<void>;
  list(filter: AdminActionFilter, page: PageRequest): Promise<Page<AdminAction>>;
}

export function createAdminActions({ store }: { store: AdminActionStore }): AdminActions {
  return {
    record: (action) => store.record(action),
    // The event's id is the row's, and its time the action's: kept once, as of when it happened.
    recordAnnounced: ({ eventId, occurredAt, action }) =>
      store.recordOnce(eventId, { ...action, id: eventId, createdAt: occurredAt }),
    list: (filter, page) => store.list(filter, page),
  };
}
