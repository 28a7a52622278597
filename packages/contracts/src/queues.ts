// Apart from the rest of the topology: the queues' names load without the event schemas and ajv.
import type { EventType } from './events.js';

export interface QueueDeclaration {
  /** Durable quorum queue shared by every process of the consuming service (competing consumers). */
  name: string;
  events: readonly EventType[];
  /** Deliveries after which a failing message is dead-lettered. */
  deliveryLimit: number;
  /** Optional: declared only where the deployment runs this consumer (see `Deployment`), absent elsewhere. */
  deployedWith?: keyof Deployment;
}

/** What a deployment runs besides the services every deployment runs: the provider sandbox, or not. */
export interface Deployment {
  sandbox: boolean;
}

/**
 * Every consumer queue and what it is bound to, declared as data. The key is the service that consumes it (the
 * only one whose broker user may read it).
 */
export const QUEUES = {
  ledger: {
    name: 'ledger.events',
    events: [
      'PaymentProcessed',
      'PaymentAdjusted',
      'PayoutAccountUpdated',
      'DepositRequested',
      'WithdrawalRequested',
      'TransferRequested',
      'UserDeleted',
      'AdminActionTaken',
    ],
    deliveryLimit: 10,
  },
  'provider-sandbox': {
    name: 'provider-sandbox.events',
    events: ['WithdrawalRequested'],
    deliveryLimit: 5,
    // A development stand-in: where no sandbox runs, a queue would only collect requests nobody answers.
    deployedWith: 'sandbox',
  },
  currency: {
    name: 'currency.events',
    events: ['AccountOpened', 'UserDeleted'],
    deliveryLimit: 5,
  },
  'webhook-delivery': {
    name: 'webhook-delivery.events',
    events: [
      'TransactionCompleted',
      'TransactionFailed',
      'TransactionCanceled',
      'TransactionReversed',
      'TransactionUpdated',
      'AccountOpened',
      'UserUpdated',
      'UserDeleted',
    ],
    deliveryLimit: 20,
  },
} as const satisfies Record<string, QueueDeclaration>;

export type QueueKey = keyof typeof QUEUES;
