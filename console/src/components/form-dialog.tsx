import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorMessage } from './error-message.js';

export interface FormDialogProps {
  title: string;
  /** The submit button's name ("Resolve", "Disable"). */
  submitLabel: string;
  /** Resolves when done (the dialog closes); a rejection is shown in the dialog, which stays open. */
  onSubmit: () => Promise<void>;
  onClose: () => void;
  children: ReactNode;
}

/**
 * A modal <dialog> (focus moves into it, Escape closes it, the page behind is inert) holding a form: an action
 * that needs a reason or a decision before it is sent.
 */
export function FormDialog({ title, submitLabel, onSubmit, onClose, children }: FormDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit();
      onClose();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} aria-labelledby={titleId} onClose={onClose}>
      <form onSubmit={(event) => void submit(event)}>
        <h2 id={titleId}>{title}</h2>
        {children}
        <ErrorMessage error={error} />
        <div className="actions">
          <button type="submit" disabled={busy}>
            {submitLabel}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * The "Reason" field of an admin action's dialog, sent with the action and kept in the audit trail. `required`: the
 * form is not sent without one of at least 3 characters.
 */
export function ReasonField({
  id,
  value,
  onChange,
  required = false,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  required?: boolean;
}) {
  return (
    <>
      <label htmlFor={id}>Reason</label>
      <textarea
        id={id}
        required={required}
        minLength={required ? 3 : undefined}
        value={value}
        onChange={(event) => onChange(event.target.value)}
      />
    </>
  );
}
