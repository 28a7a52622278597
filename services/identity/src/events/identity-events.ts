import { randomUUID } from 'node:crypto';
import { createEvent, type AnyEvent, type EventData } from '@payments/contracts';

export function userDeletedEvent(userId: string, correlationId: string): AnyEvent {
  return createEvent('UserDeleted', { user_id: userId }, { id: randomUUID(), correlationId });
}

export function tokenRevokedEvent(revocation: EventData<'TokenRevoked'>, correlationId: string): AnyEvent {
  return createEvent('TokenRevoked', revocation, { id: randomUUID(), correlationId });
}

/** The key ids identity now serves in its JWKS, after a start with another set than the last announced. */
export function signingKeysChangedEvent(kids: string[], correlationId: string): AnyEvent {
  return createEvent('SigningKeysChanged', { kids }, { id: randomUUID(), correlationId });
}

/** A user's public details after a change, for subscribers such as outgoing webhooks. */
export function userUpdatedEvent(
  user: { id: string; username: string; email: string },
  correlationId: string,
): AnyEvent {
  return createEvent(
    'UserUpdated',
    { user_id: user.id, username: user.username, email: user.email },
    { id: randomUUID(), correlationId },
  );
}
