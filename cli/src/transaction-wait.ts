import type { PaymentsClient, Transaction } from '@payments/client';

export const TERMINAL_STATUSES: readonly Transaction['status'][] = ['completed', 'failed', 'canceled'];

export type WaitOutcome =
  { done: true; transaction: Transaction } | { done: false; transaction: Transaction };

/** The fee (from API version 1.1), if the transaction carries one. */
export function feeOf(transaction: Transaction): number | undefined {
  return 'fee' in transaction ? (transaction.fee ?? undefined) : undefined;
}

/**
 * Reads a money operation's transaction until it is terminal or `timeoutMs` passes, polling with a gentle backoff;
 * the spinner shows only when asked for (a terminal, not --json).
 */
export async function waitForTransaction(
  transactions: PaymentsClient['transactions'],
  initial: Transaction,
  options: {
    timeoutMs: number;
    spinner: boolean;
    label: string;
    /** What to wait for; by default a terminal status. */
    until?: (transaction: Transaction) => boolean;
    /** The longest wait between two looks (1 s by default). */
    maxDelayMs?: number;
    /** Told the transaction as first given and after each look (the spinner, if any, is cleared meanwhile). */
    onLook?: (transaction: Transaction) => void;
  },
): Promise<WaitOutcome> {
  const reached = options.until ?? ((t: Transaction) => TERMINAL_STATUSES.includes(t.status));
  // ora loads only for a person at a terminal; scripts do not pay for it.
  const spinner = options.spinner
    ? (await import('ora'))
        .default({ text: options.label, stream: process.stderr, discardStdin: false })
        .start()
    : null;
  const deadline = Date.now() + options.timeoutMs;
  let transaction = initial;
  let delay = Math.min(150, options.maxDelayMs ?? 150);
  const look = () => {
    if (!options.onLook) return;
    spinner?.clear();
    options.onLook(transaction);
    spinner?.render();
  };
  try {
    look();
    while (!reached(transaction)) {
      if (Date.now() >= deadline) return { done: false, transaction };
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))),
      );
      delay = Math.min(delay * 1.5, options.maxDelayMs ?? 1000);
      transaction = await transactions.get(initial.id);
      look();
    }
    return { done: true, transaction };
  } finally {
    spinner?.stop();
  }
}
