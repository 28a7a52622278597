import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createConsoleClient, isAdmin, type Session } from '../session.js';
import { SignIn } from '../sign-in.js';
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
      <SignIn
        client={client}
        title="Pay a deposit"
        intro="Sign in as the person who made the deposit to pay it."
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
