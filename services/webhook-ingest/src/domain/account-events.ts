import { compileSchema, ProviderAccountEvent } from '@payments/contracts';
import type { IncomingWebhookEvent } from './webhook-event.js';

const checkAccountEvent = compileSchema(ProviderAccountEvent);

/**
 * Stripe's `account.updated` for a connected account (Stripe Connect), published as PayoutAccountUpdated: whether
 * the account pays out and what the provider still needs, with the event's `created` that orders the updates of one
 * account (the ledger keeps the newest, and asks the provider when an older one disagrees). An event whose
 * `account` names another account than its object is recorded with no effect: a Connect event is about the account
 * it was sent for. Null when it is not a valid `account.updated`.
 */
export function parseAccountEvent(body: unknown): IncomingWebhookEvent | null {
  const checked = checkAccountEvent(body);
  if (!checked.ok) return null;
  const { id, type, created, livemode, account, data } = checked.value;
  const object = data.object;
  const consistent = !account || account === object.id;
  return {
    eventId: id,
    source: 'provider',
    type,
    payload: body,
    payment: null,
    payoutAccount: consistent
      ? {
          account_id: object.id,
          payouts_enabled: object.payouts_enabled,
          currently_due: object.requirements?.currently_due ?? [],
          disabled_reason: object.requirements?.disabled_reason ?? null,
          created,
          provider_event_id: id,
          ...(livemode !== undefined && { livemode }),
        }
      : null,
  };
}
