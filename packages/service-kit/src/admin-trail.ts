import { randomUUID } from 'node:crypto';
import { createEvent, type EventData, type EventEnvelope } from '@payments/contracts';
import type { EventBus } from './bus/event-bus.js';
import { AppError } from './errors.js';

/** An admin's action on a resource that is not theirs: who, what, on what, whose, why (ADR 0096). */
export type AdminAction = EventData<'AdminActionTaken'>;

/**
 * Where a service writes its admins' actions. `record` resolves once the action is safely kept (a publisher
 * confirm, or a row in the same transaction); otherwise it throws, and the action must not happen.
 */
export interface AdminTrail {
  record(action: AdminAction, correlationId: string): Promise<void>;
}

export function adminActionTakenEvent(
  action: AdminAction,
  correlationId: string,
): EventEnvelope<'AdminActionTaken'> {
  return createEvent('AdminActionTaken', action, { id: randomUUID(), correlationId });
}

/**
 * For a service without an outbox: the action is announced to the ledger's trail with a publisher confirm. A
 * broker that does not confirm it is a 503 that says nothing was done.
 */
export function publishedAdminTrail(bus: Pick<EventBus, 'publish'>): AdminTrail {
  return {
    async record(action, correlationId) {
      try {
        await bus.publish(adminActionTakenEvent(action, correlationId));
      } catch (error) {
        const unavailable = new AppError(
          'SERVICE_UNAVAILABLE',
          'The trail of admin actions cannot record this action now, so nothing was done; try again shortly',
        );
        unavailable.cause = error;
        throw unavailable;
      }
    },
  };
}
