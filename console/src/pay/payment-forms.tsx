import { useEffect, useRef, useState, type FormEvent } from 'react';
import { confirmAtSandbox, type ConfirmOutcome } from './card-payment.js';
import { mountPaymentElement, type MountedPaymentElement } from './stripe-js.js';

/**
 * The sandbox's card form: the card goes from this page to the sandbox alone (never to the gateway), confirmed
 * with the publishable key and the client secret as Stripe.js would.
 */
export function SandboxCardForm({
  target,
  onOutcome,
}: {
  target: { apiUrl: string; publishableKey: string; clientSecret: string };
  onOutcome: (outcome: ConfirmOutcome) => void;
}) {
  const [number, setNumber] = useState('');
  const [expiry, setExpiry] = useState('');
  const [cvc, setCvc] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      onOutcome(await confirmAtSandbox(target, { number, expiry, cvc }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card-form" onSubmit={(event) => void submit(event)}>
      <label htmlFor="card-number">Card number</label>
      <input
        id="card-number"
        name="cardnumber"
        inputMode="numeric"
        autoComplete="cc-number"
        placeholder="4242 4242 4242 4242"
        required
        value={number}
        onChange={(event) => setNumber(event.target.value)}
      />
      <div className="card-row">
        <div className="field">
          <label htmlFor="card-expiry">Expiry</label>
          <input
            id="card-expiry"
            name="exp-date"
            inputMode="numeric"
            autoComplete="cc-exp"
            placeholder="MM / YY"
            aria-describedby="card-expiry-hint"
            required
            value={expiry}
            onChange={(event) => setExpiry(event.target.value)}
          />
          <span id="card-expiry-hint" className="hint">
            MM / YY
          </span>
        </div>
        <div className="field">
          <label htmlFor="card-cvc">CVC</label>
          <input
            id="card-cvc"
            name="cvc"
            inputMode="numeric"
            autoComplete="cc-csc"
            required
            value={cvc}
            onChange={(event) => setCvc(event.target.value)}
          />
        </div>
      </div>
      <button type="submit" disabled={busy}>
        Pay
      </button>
    </form>
  );
}

/** Stripe's Payment Element, from Stripe.js, confirming on this page unless the method needs a redirect. */
export function StripePaymentForm({
  publishableKey,
  clientSecret,
  onOutcome,
}: {
  publishableKey: string;
  clientSecret: string;
  onOutcome: (outcome: ConfirmOutcome) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const [mounted, setMounted] = useState<MountedPaymentElement | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const target = container.current;
    if (!target) return;
    let element: MountedPaymentElement | null = null;
    let cancelled = false;
    mountPaymentElement(target, { publishableKey, clientSecret }).then(
      (made) => {
        if (cancelled) made.unmount();
        else {
          element = made;
          setMounted(made);
        }
      },
      (error: unknown) => {
        if (!cancelled) setFailure(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      cancelled = true;
      element?.unmount();
      setMounted(null);
    };
  }, [publishableKey, clientSecret]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!mounted) return;
    setBusy(true);
    try {
      onOutcome(await mounted.confirm());
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card-form" onSubmit={(event) => void submit(event)}>
      <div ref={container} className="payment-element" />
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      <button type="submit" disabled={busy || !mounted}>
        Pay
      </button>
    </form>
  );
}
