import { AppError, createServiceClient } from '@payments/service-kit';

/** The ledger's decision on removing a user: done, or refused with the ledger's reason. */
export type LedgerRemoval = { removed: true } | { removed: false; detail: string };

export interface LedgerClient {
  /**
   * Asks the ledger to remove a user's accounts and transactions; it decides atomically against every money
   * movement and refuses while the user holds money or has anything pending. 503 when the ledger cannot say.
   */
  removeUser(userId: string, requestId: string): Promise<LedgerRemoval>;
}

/** The removal may wait behind a settlement's locks; still well inside the gateway's upstream timeout. */
const REMOVAL_TIMEOUT_MS = 5000;

export function createLedgerClient(ledgerUrl: string, serviceToken: string): LedgerClient {
  const client = createServiceClient(ledgerUrl, { serviceToken, timeoutMs: REMOVAL_TIMEOUT_MS });
  return {
    async removeUser(userId, requestId) {
      const response = await client
        .post<{ detail?: unknown } | null>(
          `/internal/users/${encodeURIComponent(userId)}/removal`,
          undefined,
          {
            'x-request-id': requestId,
          },
        )
        .catch(() => {
          throw ledgerUnavailable();
        });
      if (response.status === 200) return { removed: true };
      const detail = response.body?.detail;
      if (response.status === 422 && typeof detail === 'string') return { removed: false, detail };
      throw ledgerUnavailable();
    },
  };
}

// Deleting a user the ledger did not remove could strand money, so "cannot tell" refuses rather than guesses.
const ledgerUnavailable = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'The ledger could not confirm that this user holds no money; try again later',
    undefined,
    { 'Retry-After': '5' },
  );
