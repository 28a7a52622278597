import { useCallback, useEffect, useRef, useState } from 'react';
import { AuthenticationError, BadRequestError, NotFoundError, PermissionDeniedError } from '@payments/client';
import { ErrorMessage } from '../components/error-message.js';
import { SessionEndedError, type createConsoleClient } from '../session.js';
import type { ConfirmOutcome } from './card-payment.js';
import type { PaymentPageSettings } from './page-settings.js';
import { SandboxCardForm, StripePaymentForm } from './payment-forms.js';

export type PayClient = ReturnType<typeof createConsoleClient>;
type Deposit = Awaited<ReturnType<PayClient['transactions']['get']>>;

type Reading = { state: 'loading' } | { state: 'not-found' } | { state: 'failed'; error: unknown } | Loaded;
interface Loaded {
  state: 'loaded';
  deposit: Deposit;
}

interface Outcome {
  tone: 'success' | 'error' | 'info';
  text: string;
}

/** How often, and how many times, the page reads the deposit while it waits for the provider. */
const POLL_MS = 1_000;
const MAX_POLLS = 20;

/** The API answers someone else's deposit 403 and a malformed id 400; to the payer both are "not found". */
const isNotFound = (error: unknown) =>
  error instanceof NotFoundError ||
  error instanceof PermissionDeniedError ||
  error instanceof BadRequestError;

/**
 * The deposit as its owner reads it (GET /transaction/{id}), and, while it is pending and payable, the provider's
 * form. After a payment the page reads the deposit again until the provider's webhook has settled it.
 */
export function DepositPayment({
  client,
  settings,
  transactionId,
  signedInAsAdmin,
}: {
  client: PayClient;
  settings: PaymentPageSettings;
  transactionId: string;
  /** An admin may read anyone's deposit, never its client secret: for them there is nothing to wait for. */
  signedInAsAdmin: boolean;
}) {
  const [reading, setReading] = useState<Reading>({ state: 'loading' });
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  // Confirmed on this page, or found already paid or canceled at the provider: either way, no more form.
  const [confirmed, setConfirmed] = useState<'here' | 'elsewhere' | null>(null);
  const [polls, setPolls] = useState(0);
  const outcomeRef = useRef<HTMLParagraphElement>(null);

  const read = useCallback(async () => {
    try {
      setReading({ state: 'loaded', deposit: await client.transactions.get(transactionId) });
    } catch (error) {
      if (isNotFound(error)) setReading({ state: 'not-found' });
      // The session has ended: the app goes back to the sign-in form.
      else if (!(error instanceof SessionEndedError || error instanceof AuthenticationError))
        setReading({ state: 'failed', error });
    }
  }, [client, transactionId]);

  useEffect(() => {
    void read();
  }, [read]);

  const deposit = reading.state === 'loaded' ? reading.deposit : null;
  const clientSecret = deposit?.provider_payment?.client_secret;
  // Waiting for the provider: to prepare the payment, or to confirm the one just made.
  const waiting =
    deposit?.status === 'pending' && (confirmed !== null || (!clientSecret && !signedInAsAdmin));
  useEffect(() => {
    if (!waiting || polls >= MAX_POLLS) return;
    const timer = window.setTimeout(() => {
      setPolls((count) => count + 1);
      void read();
    }, POLL_MS);
    return () => window.clearTimeout(timer);
  }, [waiting, polls, read]);

  useEffect(() => {
    if (confirmed === 'here' && deposit && deposit.status !== 'pending') {
      setOutcome(
        deposit.status === 'completed'
          ? { tone: 'success', text: 'Payment received. The deposit is completed.' }
          : { tone: 'info', text: `The deposit is ${deposit.status}.` },
      );
    }
  }, [confirmed, deposit]);

  useEffect(() => {
    if (outcome) outcomeRef.current?.focus();
  }, [outcome]);

  const settle = (result: ConfirmOutcome) => {
    switch (result.kind) {
      case 'succeeded':
      case 'processing':
        setConfirmed('here');
        setPolls(0);
        setOutcome({
          tone: 'success',
          text:
            result.kind === 'succeeded'
              ? 'Payment received. Waiting for the provider to confirm the deposit…'
              : 'The payment is being processed. Waiting for the provider to confirm the deposit…',
        });
        return;
      case 'ended':
        setConfirmed('elsewhere');
        setPolls(0);
        setOutcome({ tone: 'info', text: result.message });
        void read();
        return;
      case 'declined':
      case 'failed':
        setOutcome({ tone: 'error', text: `${result.message} Try again or use another card.` });
    }
  };

  const payable =
    deposit !== null &&
    deposit.type === 'deposit' &&
    deposit.status === 'pending' &&
    clientSecret !== undefined &&
    confirmed === null;

  return (
    <>
      {reading.state === 'loading' && <p>Loading the deposit…</p>}
      {reading.state === 'not-found' && (
        <p role="alert" className="error">
          Deposit not found. Check the link, and that you signed in as the person who made the deposit.
        </p>
      )}
      {reading.state === 'failed' && <ErrorMessage error={reading.error} />}
      {deposit && (
        <section aria-labelledby="deposit-heading">
          <h2 id="deposit-heading">The deposit</h2>
          <dl className="figures">
            <dt>Amount</dt>
            <dd>{formatAmountOf(deposit.amount, deposit.currency)}</dd>
            <dt>Currency</dt>
            <dd>{deposit.currency}</dd>
            <dt>Status</dt>
            <dd>{deposit.status}</dd>
          </dl>
          {confirmed === null && <p>{stateOf(deposit, polls >= MAX_POLLS, signedInAsAdmin)}</p>}
        </section>
      )}
      <div className="outcome" aria-live="polite" aria-atomic="true">
        {outcome && (
          <p ref={outcomeRef} tabIndex={-1} className={`outcome-${outcome.tone}`}>
            {outcome.text}
          </p>
        )}
      </div>
      {payable && clientSecret && (
        <section aria-labelledby="pay-heading">
          <h2 id="pay-heading">Pay by card</h2>
          {settings.provider === 'sandbox' && (
            <SandboxCardForm
              target={{ apiUrl: settings.api_url, publishableKey: settings.publishable_key, clientSecret }}
              onOutcome={settle}
            />
          )}
          {settings.provider === 'stripe' && (
            <StripePaymentForm
              publishableKey={settings.publishable_key}
              clientSecret={clientSecret}
              onOutcome={settle}
            />
          )}
          {settings.provider === 'none' && <p>This deployment takes no payments on this page.</p>}
        </section>
      )}
    </>
  );
}

/** An amount with as many decimals as its currency shows (25.00 USD, 500 JPY), more when it has them. */
function formatAmountOf(amount: number, currency: string): string {
  let digits = 2;
  try {
    digits =
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().minimumFractionDigits ??
      2;
  } catch {
    // Not an ISO 4217 code Intl knows: two decimals.
  }
  return amount.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: 8 });
}

/** What the payer is told about the deposit as it stands, before they pay. */
function stateOf(deposit: Deposit, gaveUpWaiting: boolean, signedInAsAdmin: boolean): string {
  if (deposit.type !== 'deposit') return 'This transaction is not a deposit: there is nothing to pay here.';
  switch (deposit.status) {
    case 'completed':
      return 'This deposit has been paid.';
    case 'pending':
      if (deposit.provider_payment?.client_secret) return 'Enter your card to pay this deposit.';
      if (signedInAsAdmin) return 'Only the person who made this deposit can pay it.';
      return gaveUpWaiting
        ? 'The payment is not ready yet. Reload this page in a moment.'
        : 'Preparing the payment…';
    default:
      return `This deposit is ${deposit.status}: it can no longer be paid.`;
  }
}
