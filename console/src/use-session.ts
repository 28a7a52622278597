import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createConsoleClient, type Session } from './session.js';

const SESSION_ENDED = 'Your session has ended. Sign in again.';

/**
 * The page's session, held in this component's state only (a reload or a closed tab ends it), and the one client
 * that calls the API with its token. The session ends with its token: at its expiry, when the API refuses it, or on
 * sign-out; `notice` then says why.
 */
export function useSession() {
  const [session, setSession] = useState<Session | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const held = useRef<Session | null>(null);

  const end = useCallback((why: string | null) => {
    held.current = null;
    setSession(null);
    setNotice(why);
  }, []);
  const client = useMemo(
    () =>
      createConsoleClient({
        current: () => held.current,
        refused: () => {
          if (held.current) end(SESSION_ENDED);
        },
      }),
    [end],
  );

  useEffect(() => {
    if (!session) return;
    const timer = window.setTimeout(() => end(SESSION_ENDED), Math.max(0, session.expiresAt - Date.now()));
    return () => window.clearTimeout(timer);
  }, [session, end]);

  /** Keeps a session just signed in. */
  const begin = useCallback((next: Session) => {
    held.current = next;
    setNotice(null);
    setSession(next);
  }, []);
  /** Revokes a session just signed in without keeping it (its token is never used for anything else). */
  const discard = useCallback(
    async (next: Session) => {
      held.current = next;
      await client.auth.logout().catch(() => undefined);
      held.current = null;
    },
    [client],
  );
  const signOut = useCallback(async () => {
    try {
      await client.auth.logout();
    } finally {
      end('You have signed out.');
    }
  }, [client, end]);

  return { session, notice, client, begin, discard, signOut };
}
