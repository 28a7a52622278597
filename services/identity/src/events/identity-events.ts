import { randomUUID } from 'node:crypto';
import { createEvent, type AnyEvent, type EventData } from '@payments/contracts';

export function userDeletedEvent(userId: string, correlationId: string): AnyEvent {
  return createEvent('UserDeleted', { user_id: userId }, { id: randomUUID(), correlationId });
}

export function tokenRevokedEvent(revocation: EventData<'TokenRevoked'>, correlationId: string): AnyEvent {
  return createEvent('TokenRevoked', revocation, { id: randomUUID(), correlationId });
}
