import { createPaymentsClient, PaymentsError, type PaymentsClient, type Token } from '@payments/client';

/** Who is signed in, read from the token's claims (for what the page shows; the API decides what is allowed). */
export interface Session {
  token: string;
  userId: string;
  role: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The claims of a JWT, decoded without verifying: the API verifies it on every call. */
export function sessionOf(token: Token, receivedAt: number): Session {
  const payload = token.token.split('.')[1] ?? '';
  const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
  const json = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const claims = JSON.parse(json) as { sub?: unknown; role?: unknown; exp?: unknown };
  const expiresAt = typeof claims.exp === 'number' ? claims.exp * 1000 : receivedAt + token.expires_in * 1000;
  return {
    token: token.token,
    userId: typeof claims.sub === 'string' ? claims.sub : '',
    role: typeof claims.role === 'string' ? claims.role : '',
    expiresAt,
  };
}

export const isAdmin = (session: Session) => session.role === 'admin';

/** Raised instead of a call when the session has ended (expired, refused or signed out). */
export class SessionEndedError extends PaymentsError {
  override name = 'SessionEndedError';
}

export interface SessionHolder {
  current(): Session | null;
  /** The API refused the token (401): the session ends. */
  refused(): void;
}

/**
 * The one client of the page, same origin as the console. Its token comes from the holder, in memory only; it is
 * never refreshed: when it expires or is refused, the operator signs in again.
 */
export function createConsoleClient(holder: SessionHolder): PaymentsClient<'1.1'> {
  return createPaymentsClient({
    baseUrl: window.location.origin,
    tokenProvider: {
      getToken: () => {
        const session = holder.current();
        if (!session || Date.now() >= session.expiresAt) {
          holder.refused();
          return Promise.reject(new SessionEndedError('The session has ended: sign in again'));
        }
        return Promise.resolve(session.token);
      },
      tokenRejected: () => {
        holder.refused();
        return false;
      },
    },
    maxRetries: 1,
  });
}
