import type { Request } from 'express';
import type { EventData } from '@payments/contracts';
import type { Consumer, EventBus, RevocationList } from '@payments/service-kit';

/** Every gateway process hears every revocation, so a logged-out token is refused everywhere at once. */
export function followRevocations(
  bus: EventBus,
  revocations: RevocationList,
  onSubscribed: () => void,
): Promise<Consumer> {
  return bus.broadcast(
    'revocations',
    { TokenRevoked: async (event) => revocations.add(event.data) },
    { onSubscribed },
  );
}

/**
 * The token a logout through this gateway revoked, once identity has answered 204: refused from that answer on,
 * without waiting for the TokenRevoked event, which may arrive after the client's next request.
 */
export function revokedByLogout(req: Request, status: number): EventData<'TokenRevoked'> | null {
  if (req.method !== 'POST' || req.path !== '/auth/logout' || status !== 204 || !req.auth) return null;
  return { jti: req.auth.jti, expires_at: req.auth.expiresAt };
}
