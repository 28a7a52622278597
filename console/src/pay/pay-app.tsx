import { isAdmin } from '../session.js';
import { SignIn } from '../sign-in.js';
import { useSession } from '../use-session.js';
import { DepositPayment } from './deposit-payment.js';
import type { PaymentPageSettings } from './page-settings.js';

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
  const { session, notice, client, begin, signOut } = useSession();

  if (!session) {
    return (
      <SignIn
        client={client}
        title="Pay a deposit"
        intro="Sign in as the person who made the deposit to pay it."
        notice={notice}
        onSignedIn={begin}
      />
    );
  }
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
