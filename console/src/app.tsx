import { useEffect, useState } from 'react';
import { ConsoleContext } from './console-context.js';
import { PAGES, pageOf } from './pages/index.js';
import { Link, navigate, useRoute } from './router.js';
import { isAdmin, type Session } from './session.js';
import { SignIn } from './sign-in.js';
import { useSession } from './use-session.js';

/**
 * The console: the sign-in form until an admin signs in, then the shell (nav and the route's page). The session —
 * the token — lives in this component's state only: a reload or a closed tab ends it.
 */
export function App() {
  const { session, notice, client, begin, discard, signOut } = useSession();
  const [refusedRole, setRefusedRole] = useState(false);

  const signedIn = async (next: Session) => {
    if (!isAdmin(next)) {
      // Nothing to do here for anyone else: their token is revoked at once rather than kept.
      await discard(next);
      setRefusedRole(true);
      return;
    }
    begin(next);
  };

  if (refusedRole) return <AdministratorsOnly onBack={() => setRefusedRole(false)} />;
  if (!session) return <SignIn client={client} onSignedIn={(next) => void signedIn(next)} notice={notice} />;

  return (
    <ConsoleContext.Provider value={{ client, session }}>
      <Shell onSignOut={() => void signOut()} />
    </ConsoleContext.Provider>
  );
}

function AdministratorsOnly({ onBack }: { onBack: () => void }) {
  return (
    <main className="sign-in">
      <h1>Administrators only</h1>
      <p>This console is for the platform&apos;s administrators. You have been signed out.</p>
      <button type="button" onClick={onBack}>
        Back to sign in
      </button>
    </main>
  );
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const found = pageOf(route);
  useEffect(() => {
    if (route === '/') navigate(PAGES[0]?.path ?? '/');
  }, [route]);
  const Page = found?.page.component;

  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="top-bar">
        <span className="product">Payments console</span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {PAGES.map((page) => (
            <li key={page.path}>
              <Link to={page.path} aria-current={found?.page === page ? 'page' : undefined}>
                {page.name}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="content">
        {Page && found ? (
          <Page key={found.page.path} subpath={found.subpath} />
        ) : (
          <>
            <h1>Not found</h1>
            <p>The console has no page at this address.</p>
          </>
        )}
      </main>
    </div>
  );
}
