import type { Request } from 'express';
import type { EventData } from '@payments/contracts';
import {
  bearerToken,
  unverifiedTokenId,
  type Consumer,
  type EventBus,
  type RevocationList,
} from '@payments/service-kit';

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
 * The token a logout (204) or a refresh (200) through this gateway revoked, once identity has answered: refused
 * from that answer on, without waiting for the TokenRevoked event, which may arrive after the client's next request.
 */
export function revokedThroughGateway(req: Request, status: number): EventData<'TokenRevoked'> | null {
  if (req.method !== 'POST') return null;
  if (req.path === '/auth/logout' && status === 204 && req.auth) {
    return { jti: req.auth.jti, expires_at: req.auth.expiresAt };
  }
  // Refresh is public here (identity verifies the token it carries); its 200 says that token is now revoked.
  if (req.path === '/auth/refresh' && status === 200) {
    return unverifiedTokenId(bearerToken(req.get('authorization')));
  }
  return null;
}
