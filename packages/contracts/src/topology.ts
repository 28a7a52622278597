import { EVENTS, type EventType } from './events.js';

/** The one topic exchange every domain event is published to. */
export const EVENTS_EXCHANGE = 'payments.events';
/** Where queues send what they give up on; each queue's dead letters land in `<queue>.dlq`. */
export const DEAD_LETTER_EXCHANGE = 'payments.events.dlx';

export interface QueueDeclaration {
  /** Durable quorum queue shared by every process of the consuming service (competing consumers). */
  name: string;
  events: readonly EventType[];
  /** Deliveries after which a failing message is dead-lettered. */
  deliveryLimit: number;
}

/** Every consumer queue and what it is bound to, declared as data and asserted by every process at start. */
export const QUEUES = {
  ledger: {
    name: 'ledger.events',
    events: ['PaymentProcessed', 'TransferRequested', 'UserDeleted'],
    deliveryLimit: 10,
  },
  'provider-sandbox': {
    name: 'provider-sandbox.events',
    events: ['DepositRequested', 'WithdrawalRequested'],
    deliveryLimit: 5,
  },
  currency: {
    name: 'currency.events',
    events: ['AccountOpened', 'UserDeleted'],
    deliveryLimit: 5,
  },
} as const satisfies Record<string, QueueDeclaration>;

export type QueueKey = keyof typeof QUEUES;

/** Events every process of a service must see (not shared between competing consumers), e.g. revocations. */
export const BROADCASTS = {
  revocations: { events: ['TokenRevoked'] },
} as const satisfies Record<string, { events: readonly EventType[] }>;

export type BroadcastKey = keyof typeof BROADCASTS;

/** Events announced for whoever may listen (notifications, analytics, per-process revocation lists): no queue has to be bound for them. */
export const ANNOUNCEMENTS: readonly EventType[] = [
  'TransactionCompleted',
  'TransactionFailed',
  'TokenRevoked',
];

export function isAnnouncement(type: EventType): boolean {
  return ANNOUNCEMENTS.includes(type);
}

export function deadLetterQueueName(queue: string): string {
  return `${queue}.dlq`;
}

export function bindingKeys(events: readonly EventType[]): string[] {
  return events.map((type) => EVENTS[type].routingKey);
}
