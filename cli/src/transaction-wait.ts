import type { ApiClient } from './api-client.js';

export interface Transaction {
  id: string;
  account_id: string;
  type: string;
  status: string;
  amount: number | string;
  currency: string;
  counterparty_account_id?: string | null;
  failure_reason?: string | null;
  fee?: number | string | null;
  created_at?: string;
  completed_at?: string | null;
  [field: string]: unknown;
}

export const TERMINAL_STATUSES = ['completed', 'failed', 'canceled'];

export type WaitOutcome =
  { done: true; transaction: Transaction } | { done: false; transaction: Transaction };

/**
 * Follows a money operation's `Location` until its transaction is terminal or `timeoutMs` passes, polling with a
 * gentle backoff; the spinner shows only when asked for (a terminal, not --json).
 */
export async function waitForTransaction(
  api: ApiClient,
  location: string,
  initial: Transaction,
  options: {
    timeoutMs: number;
    spinner: boolean;
    label: string;
    /** What to wait for; by default a terminal status. */
    until?: (transaction: Transaction) => boolean;
    /** The longest wait between two looks (1 s by default). */
    maxDelayMs?: number;
  },
): Promise<WaitOutcome> {
  const reached = options.until ?? ((t: Transaction) => TERMINAL_STATUSES.includes(t.status));
  const url = new URL(location, api.baseUrl).toString();
  // ora loads only for a person at a terminal; scripts do not pay for it.
  const spinner = options.spinner
    ? (await import('ora'))
        .default({ text: options.label, stream: process.stderr, discardStdin: false })
        .start()
    : null;
  const deadline = Date.now() + options.timeoutMs;
  let transaction = initial;
  let delay = Math.min(150, options.maxDelayMs ?? 150);
  try {
    while (!reached(transaction)) {
      if (Date.now() >= deadline) return { done: false, transaction };
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))),
      );
      delay = Math.min(delay * 1.5, options.maxDelayMs ?? 1000);
      transaction = (await api.get<Transaction>(url)).body;
    }
    return { done: true, transaction };
  } finally {
    spinner?.stop();
  }
}
