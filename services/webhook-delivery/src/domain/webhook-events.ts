import type { EventType, WebhookEventType } from '@payments/contracts';

/** The bus events that become outgoing webhook events, and their public names. */
export const WEBHOOK_EVENT_OF = {
  TransactionCompleted: 'transaction.completed',
  TransactionFailed: 'transaction.failed',
  TransactionCanceled: 'transaction.canceled',
  TransactionReversed: 'transaction.reversed',
  TransactionUpdated: 'transaction.updated',
  AccountOpened: 'account.created',
  UserUpdated: 'user.updated',
} as const satisfies Partial<Record<EventType, WebhookEventType>>;

export type SubscribableBusEvent = keyof typeof WEBHOOK_EVENT_OF;
