import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { ErrorMessage } from '../components/error-message.js';
import { createConsoleClient, isAdmin, sessionOf, type Session } from '../session.js';
import { DepositPayment, type PayClient } from './deposit-payment.js';
import type { PaymentPageSettings } from './page-settings.js';

const SESSION_ENDED = 'Your session has ended. Sign in again.';

/**
 * The payment page: the payer signs in, then reads and pays their deposit. As in the console, the token lives in
 * this component's state only (a reload ends the session) and the API decides what the payer may see.
 */
export function PayApp({
  settings,
  transactionId,
}: {
  settings: PaymentPageSettings;
  transactionId: string;
}) {
  const [session, setSession] = useState<Session | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const held = useRef<Session | null>(null);

  const end = useCallback((why: string | null) => {
    held.current = null;
    setSession(null);
    setNotice(why);
  }, []);
  const client: PayClient = useMemo(
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

  if (!session) {
    return (
      <PaySignIn
        client={client}
        notice={notice}
        onSignedIn={(next) => {
          held.current = next;
          setNotice(null);
          setSession(next);
        }}
      />
    );
  }
  const signOut = async () => {
    try {
      await client.auth.logout();
    } finally {
      end('You have signed out.');
    }
  };
  return (
    <main className="pay">
      <div className="pay-top">
        <h1>Pay a deposit</h1>
        <button type="button" className="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </div>
      <DepositPayment
        client={client}
        settings={settings}
        transactionId={transactionId}
        signedInAsAdmin={isAdmin(session)}
      />
    </main>
  );
}

function PaySignIn({
  client,
  notice,
  onSignedIn,
}: {
  client: PayClient;
  notice: string | null;
  onSignedIn: (session: Session) => void;
}) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const sentAt = Date.now();
      const token = await client.auth.login({ username, password });
      setPassword('');
      onSignedIn(sessionOf(token, sentAt));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>Pay a deposit</h1>
      <p>Sign in as the person who made the deposit to pay it.</p>
      {notice && <p className="notice">{notice}</p>}
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="pay-username">Username</label>
        <input
          id="pay-username"
          name="username"
          autoComplete="username"
          required
          value={username}
          onChange={(event) => setUsername(event.target.value)}
        />
        <label htmlFor="pay-password">Password</label>
        <input
          id="pay-password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorMessage error={error} />
      </form>
    </main>
  );
}
