import { AppError, createServiceClient } from '@payments/service-kit';

export interface UserHoldings {
  balance_total_nonzero: boolean;
  pending_transactions: number;
}

export interface LedgerClient {
  /** What the ledger holds for a user; 503 when the ledger cannot say. */
  holdingsOf(userId: string, requestId: string): Promise<UserHoldings>;
}

function isHoldings(body: unknown): body is UserHoldings {
  const candidate = body as Partial<UserHoldings> | null;
  return (
    typeof candidate?.balance_total_nonzero === 'boolean' &&
    typeof candidate.pending_transactions === 'number'
  );
}

export function createLedgerClient(ledgerUrl: string, serviceToken: string): LedgerClient {
  const client = createServiceClient(ledgerUrl, { serviceToken });
  return {
    async holdingsOf(userId, requestId) {
      const response = await client
        .get<unknown>(`/internal/users/${encodeURIComponent(userId)}/holdings`, {
          'x-request-id': requestId,
        })
        .catch((error: unknown) => {
          if (error instanceof AppError) throw error;
          throw ledgerUnavailable();
        });
      if (response.status !== 200 || !isHoldings(response.body)) throw ledgerUnavailable();
      return response.body;
    },
  };
}

// Deleting a user we cannot check could destroy money, so "cannot tell" refuses rather than guesses.
const ledgerUnavailable = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'The ledger could not confirm that this user holds no money; try again later',
    undefined,
    { 'Retry-After': '5' },
  );
