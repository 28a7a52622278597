import type { Request } from 'express';
import { MAX_API_KEY_TOKEN_TTL_SECONDS, apiKeyTokenId, type EventData } from '@payments/contracts';
import { bearerToken, unverifiedTokenId } from '@payments/service-kit';

/**
 * The token a logout (204) or a refresh (200) through this gateway revoked, or an API key's (204), once identity has answered: refused
 * from that answer on, without waiting for the TokenRevoked event, which may arrive after the client's next request.
 */
const REVOKED_KEY_PATH = /^\/api-keys\/([0-9a-f-]{36})$/i;

export function revokedThroughGateway(req: Request, status: number): EventData<'TokenRevoked'> | null {
  // A revoked API key (204): the tokens it was exchanged for, this gateway's kept one among them.
  const revokedKey = req.method === 'DELETE' && status === 204 ? REVOKED_KEY_PATH.exec(req.path) : null;
  if (revokedKey) {
    return {
      jti: apiKeyTokenId((revokedKey[1] as string).toLowerCase()),
      expires_at: Math.floor(Date.now() / 1000) + MAX_API_KEY_TOKEN_TTL_SECONDS,
    };
  }
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
