import type { ApiVersion } from '@payments/contracts';
import { VERSION_HEADER } from '@payments/contracts';
import { createServiceClient } from '@payments/service-kit';
import type { SubscribableEvent } from '../domain/event-payload.js';

export type RenderableEvent = SubscribableEvent;

export interface ObjectRenderer {
  /**
   * The object an event is about, as the public API renders it at `version`: fetched from the service that owns
   * it (internal API, SERVICE_TOKEN). Gone meanwhile (404): built from what the event carries. Unreachable: throws,
   * and the event is retried by the bus.
   */
  render(event: RenderableEvent, version: ApiVersion): Promise<Record<string, unknown>>;
}

/** How long the owner of an object may take to render it. */
export const RENDER_TIMEOUT_MS = 5000;

export class RenderingUnavailableError extends Error {
  override name = 'RenderingUnavailableError';
}

export function createObjectRenderer(options: {
  ledgerUrl: string;
  identityUrl: string;
  serviceToken: string;
}): ObjectRenderer {
  const ledger = createServiceClient(options.ledgerUrl, {
    serviceToken: options.serviceToken,
    timeoutMs: RENDER_TIMEOUT_MS,
  });
  const identity = createServiceClient(options.identityUrl, {
    serviceToken: options.serviceToken,
    timeoutMs: RENDER_TIMEOUT_MS,
  });

  const fetchObject = async (
    client: typeof ledger,
    path: string,
    version: ApiVersion,
  ): Promise<Record<string, unknown> | null> => {
    const response = await client
      .get<Record<string, unknown>>(path, { [VERSION_HEADER]: version })
      .catch((error: unknown) => {
        throw new RenderingUnavailableError(`could not fetch ${path}`, { cause: error });
      });
    if (response.status === 404) return null;
    if (response.status !== 200 || !response.body) {
      throw new RenderingUnavailableError(`fetching ${path} answered ${response.status}`);
    }
    return response.body;
  };

  return {
    async render(event, version) {
      switch (event.type) {
        case 'TransactionCompleted':
        case 'TransactionFailed':
        case 'TransactionCanceled':
        case 'TransactionReversed':
        case 'TransactionUpdated': {
          const data = event.data;
          // The payload goes to this user's endpoints: the ledger adds their own metadata and reference.
          const found = await fetchObject(
            ledger,
            `/internal/transactions/${data.transaction_id}?for_user=${encodeURIComponent(data.user_id)}`,
            version,
          );
          return (
            found ?? {
              id: data.transaction_id,
              account_id: data.account_id,
              amount_minor: data.amount,
              currency: data.currency,
              ...('type' in data ? { type: data.type } : {}),
            }
          );
        }
        case 'AccountOpened': {
          const data = event.data;
          const found = await fetchObject(ledger, `/internal/accounts/${data.account_id}`, version);
          return found ?? { id: data.account_id, user_id: data.user_id, currency: data.currency };
        }
        case 'UserUpdated': {
          const data = event.data;
          const found = await fetchObject(identity, `/internal/users/${data.user_id}`, version);
          return found ?? { id: data.user_id, username: data.username, email: data.email };
        }
      }
    },
  };
}
