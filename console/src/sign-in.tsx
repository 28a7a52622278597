import { useState, type FormEvent } from 'react';
import type { PaymentsClient } from '@payments/client';
import { ErrorMessage } from './components/error-message.js';
import { sessionOf, type Session } from './session.js';

/**
 * The sign-in form of the console and of the payment page: POST /auth/login through the client; the token goes to
 * the app's memory, nowhere else.
 */
export function SignIn({
  client,
  onSignedIn,
  notice,
  title = 'Payments console',
  intro,
}: {
  client: PaymentsClient<'1.1'>;
  onSignedIn: (session: Session) => void;
  notice: string | null;
  title?: string;
  intro?: string;
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
      <h1>{title}</h1>
      {intro && <p>{intro}</p>}
      {notice && <p className="notice">{notice}</p>}
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="sign-in-username">Username</label>
        <input
          id="sign-in-username"
          name="username"
          autoComplete="username"
          required
          value={username}
          onChange={(event) => setUsername(event.target.value)}
        />
        <label htmlFor="sign-in-password">Password</label>
        <input
          id="sign-in-password"
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
