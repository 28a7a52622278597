import type { Token, TokenProvider } from '@payments/client';
import { CliError, EXIT } from './exit-codes.js';
import type { StateStore } from './state-store.js';

/** Tokens this close to expiry are swapped for a fresh one before use. */
const REFRESH_WITHIN_SECONDS = 120;

export interface SessionTokens extends TokenProvider {
  /** Whether a call of this invocation was sent with the saved token. */
  handedOut(): boolean;
}

/**
 * The token `payments login` saved, as the client's token source: read once per invocation, refreshed (and saved
 * again) when it is about to expire, and never replaced by a login of its own: a refused token means log in again.
 */
export function createSessionTokens(
  state: StateStore,
  refresh: (token: string) => Promise<Token>,
  now: () => number = () => Math.floor(Date.now() / 1000),
): SessionTokens {
  let pending: Promise<string> | null = null;
  let handedOut = false;

  const obtain = async (): Promise<string> => {
    const session = await state.readSession();
    if (!session) throw new CliError(EXIT.auth, 'You are not logged in.', ['Log in with: payments login']);
    const left = session.expires_at - now();
    if (left > 0 && left < REFRESH_WITHIN_SECONDS) {
      // A refused or failed refresh leaves the token as it is: it is still valid for a while.
      const fresh = await refresh(session.token).catch(() => null);
      if (fresh?.token && fresh.expires_in) {
        await state.writeSession({ ...session, token: fresh.token, expires_at: now() + fresh.expires_in });
        return fresh.token;
      }
    }
    return session.token;
  };

  return {
    async getToken() {
      pending ??= obtain();
      const token = await pending;
      handedOut = true;
      return token;
    },
    // Expired or revoked: no other token to try, so the call fails and the user is told to log in.
    tokenRejected: () => false,
    handedOut: () => handedOut,
  };
}
