import type { Request } from 'express';
import type { EventData } from '@payments/contracts';
import { bearerToken, unverifiedTokenId } from '@payments/service-kit';

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
