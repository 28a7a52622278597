import { EVENTS, type EventType } from './events.js';
import { QUEUES, type Deployment, type QueueDeclaration, type QueueKey } from './queues.js';

/** The one topic exchange every domain event is published to. */
export const EVENTS_EXCHANGE = 'payments.events';
/** Where queues send what they give up on; each queue's dead letters land in `<queue>.dlq`. */
export const DEAD_LETTER_EXCHANGE = 'payments.events.dlx';

/** The queues a deployment has: every queue, except the optional ones whose consumer it does not run. */
export function deployedQueues(deployment: Deployment): QueueKey[] {
  return (Object.keys(QUEUES) as QueueKey[]).filter((key) => {
    const { deployedWith } = QUEUES[key] as QueueDeclaration;
    return deployedWith === undefined || deployment[deployedWith];
  });
}

/** The optional queues a deployment does not have: what the provisioner removes if an earlier deployment left them. */
export function absentQueues(deployment: Deployment): QueueKey[] {
  const deployed = deployedQueues(deployment);
  return (Object.keys(QUEUES) as QueueKey[]).filter((key) => !deployed.includes(key));
}

/** Every service that connects to the broker; each has a broker user of its own with only the rights below. */
export type BusParticipant =
  'identity' | 'ledger' | 'currency' | 'webhook-ingest' | 'provider-sandbox' | 'webhook-delivery' | 'gateway';

export const BUS_PARTICIPANTS: readonly BusParticipant[] = [
  'identity',
  'ledger',
  'currency',
  'webhook-ingest',
  'provider-sandbox',
  'webhook-delivery',
  'gateway',
];

/** Events every process of a service must see (not shared between competing consumers), e.g. revocations. */
export const BROADCASTS = {
  revocations: {
    events: ['TokenRevoked'],
    subscribers: ['gateway', 'identity', 'ledger', 'currency', 'webhook-delivery'],
  },
  /** Identity's own verifier uses the keys it serves, so only the other verifiers hear it. */
  'signing-keys': {
    events: ['SigningKeysChanged'],
    subscribers: ['gateway', 'ledger', 'currency', 'webhook-delivery'],
  },
} as const satisfies Record<string, { events: readonly EventType[]; subscribers: readonly BusParticipant[] }>;

export type BroadcastKey = keyof typeof BROADCASTS;

/** Events announced for whoever may listen (notifications, analytics, per-process revocation lists): no queue has to be bound for them. */
export const ANNOUNCEMENTS: readonly EventType[] = [
  'TransactionCompleted',
  'TransactionFailed',
  'TransactionReversed',
  'TokenRevoked',
  'SigningKeysChanged',
];

/**
 * The services allowed to publish each event (one, but for the trail every service with admin actions writes to):
 * the broker refuses the routing key to every other user, so nobody else can confirm a payment (PaymentProcessed)
 * or revoke a token (TokenRevoked).
 */
export const PUBLISHERS = {
  PaymentProcessed: 'webhook-ingest',
  PaymentAdjusted: 'webhook-ingest',
  PayoutAccountUpdated: 'webhook-ingest',
  DepositRequested: 'ledger',
  WithdrawalRequested: 'ledger',
  TransferRequested: 'ledger',
  TransactionCompleted: 'ledger',
  TransactionFailed: 'ledger',
  TransactionCanceled: 'ledger',
  TransactionReversed: 'ledger',
  TransactionUpdated: 'ledger',
  AccountOpened: 'ledger',
  UserDeleted: 'identity',
  UserUpdated: 'identity',
  TokenRevoked: 'identity',
  SigningKeysChanged: 'identity',
  // Each service that serves admins announces their actions; the ledger keeps them (it records its own directly).
  AdminActionTaken: ['identity', 'webhook-delivery', 'currency'],
} as const satisfies Record<EventType, BusParticipant | readonly BusParticipant[]>;

/** The services allowed to publish an event. */
export function publishersOf(type: EventType): readonly BusParticipant[] {
  const publishers: BusParticipant | readonly BusParticipant[] = PUBLISHERS[type];
  return typeof publishers === 'string' ? [publishers] : publishers;
}

/** What one service may do on the bus, derived from the declarations above. */
export interface BusRights {
  publishes: EventType[];
  consumes: QueueKey[];
  broadcasts: BroadcastKey[];
}

export function busRightsOf(participant: BusParticipant): BusRights {
  const keys = <K extends string>(record: Record<K, unknown>) => Object.keys(record) as K[];
  return {
    publishes: keys(PUBLISHERS).filter((type) => publishersOf(type).includes(participant)),
    consumes: keys(QUEUES).filter((key) => key === participant),
    broadcasts: keys(BROADCASTS).filter((key) =>
      (BROADCASTS[key].subscribers as readonly BusParticipant[]).includes(participant),
    ),
  };
}

export interface BrokerTopology {
  exchanges: { name: string; type: 'topic' | 'direct' | 'fanout' }[];
  queues: { name: string; arguments: Record<string, string | number> }[];
  bindings: { exchange: string; queue: string; routingKey: string }[];
}

/** What declaring a topology needs of a broker channel (amqplib's `Channel` has it). */
export interface TopologyChannel {
  assertExchange(name: string, type: string, options: { durable: boolean }): Promise<unknown>;
  assertQueue(
    name: string,
    options: { durable: boolean; arguments: Record<string, string | number> },
  ): Promise<unknown>;
  bindQueue(queue: string, exchange: string, routingKey: string): Promise<unknown>;
}

/** Declares every exchange, queue and binding of `topology`, durable; what is there already is left as it is. */
export async function declareTopology(channel: TopologyChannel, topology: BrokerTopology): Promise<void> {
  for (const { name, type } of topology.exchanges)
    await channel.assertExchange(name, type, { durable: true });
  for (const queue of topology.queues)
    await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
  for (const { queue, exchange, routingKey } of topology.bindings)
    await channel.bindQueue(queue, exchange, routingKey);
}

/**
 * Every exchange, queue and binding of a deployment under a namespace: what the provisioner declares (and what the
 * RabbitMQ definitions files hold), and what each service checks is there before it publishes or consumes. An
 * optional queue (the sandbox's) is part of it only where the deployment runs its consumer.
 */
export function brokerTopology(namespace: string, deployment: Deployment): BrokerTopology {
  const exchange = namespace + EVENTS_EXCHANGE;
  const deadLetterExchange = namespace + DEAD_LETTER_EXCHANGE;
  const topology: BrokerTopology = {
    exchanges: [
      { name: exchange, type: 'topic' },
      { name: deadLetterExchange, type: 'direct' },
    ],
    queues: [],
    bindings: [],
  };
  for (const key of deployedQueues(deployment)) {
    const queue: QueueDeclaration = QUEUES[key];
    const name = namespace + queue.name;
    const dlq = deadLetterQueueName(name);
    topology.queues.push(
      { name: dlq, arguments: { 'x-queue-type': 'quorum' } },
      {
        name,
        arguments: {
          'x-queue-type': 'quorum',
          'x-delivery-limit': queue.deliveryLimit,
          'x-dead-letter-exchange': deadLetterExchange,
          'x-dead-letter-routing-key': name,
        },
      },
    );
    topology.bindings.push({ exchange: deadLetterExchange, queue: dlq, routingKey: name });
    const replay = replayExchangeName(name);
    topology.exchanges.push({ name: replay, type: 'fanout' });
    topology.bindings.push({ exchange: replay, queue: name, routingKey: '' });
    for (const routingKey of bindingKeys(queue.events))
      topology.bindings.push({ exchange, queue: name, routingKey });
  }
  return topology;
}

export function isAnnouncement(type: EventType): boolean {
  return ANNOUNCEMENTS.includes(type);
}

/**
 * Whether a queue of every deployment must receive the event: such events are published `mandatory`, so a missing
 * binding fails the publish instead of losing the event. Announcements and the requests only the optional sandbox
 * consumes (WithdrawalRequested) are not: with nobody bound the broker drops them, which is right.
 */
export function mustBeRouted(type: EventType): boolean {
  if (isAnnouncement(type)) return false;
  return deployedQueues({ sandbox: false }).some((key) =>
    (QUEUES[key].events as readonly EventType[]).includes(type),
  );
}

export function deadLetterQueueName(queue: string): string {
  return `${queue}.dlq`;
}

/**
 * The fanout exchange bound to one queue alone, that its dead letters are replayed through: the consuming service
 * may write to it, and so put events back onto its own queue and no other (the default exchange would reach every
 * queue).
 */
export function replayExchangeName(queue: string): string {
  return `${queue}.replay`;
}

export function bindingKeys(events: readonly EventType[]): string[] {
  return events.map((type) => EVENTS[type].routingKey);
}
