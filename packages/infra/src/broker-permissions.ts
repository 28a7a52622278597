import {
  BROADCASTS,
  BUS_PARTICIPANTS,
  EVENTS,
  EVENTS_EXCHANGE,
  QUEUES,
  bindingKeys,
  brokerTopology,
  busRightsOf,
  deadLetterQueueName,
  replayExchangeName,
  type BusParticipant,
  type Deployment,
} from '@payments/contracts';
import { deployedServices } from './topology.js';

/** RabbitMQ's permissions for one user on one vhost: regular expressions over resource names and routing keys. */
export interface BrokerPermissions {
  configure: string;
  write: string;
  read: string;
  /** Routing keys on the events exchange; checked on publish (write) and on queue.bind (read). */
  topic: { exchange: string; write: string; read: string };
}

/** A service's broker login, as the provisioner creates it. */
export interface BrokerUser {
  participant: BusParticipant;
  username: string;
  /** Absent: the user exists with its rights but cannot log in with a password until one is set. */
  password?: string;
}

/** The queues RabbitMQ names itself (`assertQueue('')`): each process's exclusive broadcast queue. */
const SERVER_NAMED_QUEUE = 'amq\\.gen-.*';

const literal = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Matches exactly these; nothing at all (`^$`, no resource or key is empty here) when there are none. */
const onlyThese = (patterns: string[]) => (patterns.length > 0 ? `^(${patterns.join('|')})$` : '^$');

/** A service's broker user by default: its name under the namespace, like its queues. */
export function brokerUsername(participant: BusParticipant, namespace = ''): string {
  return namespace + participant;
}

/**
 * Exactly what a service needs on the broker, from the topology in contracts: publish its own events, consume
 * its own queue, read its dead letters and replay them onto that queue through its replay exchange (which reaches
 * no other queue), and declare and bind its own server-named broadcast queue to the broadcast's routing keys.
 * It may declare, delete or purge nothing else; the provisioner declares the shared topology.
 */
export function brokerPermissionsOf(participant: BusParticipant, namespace = ''): BrokerPermissions {
  const rights = busRightsOf(participant);
  const exchange = namespace + EVENTS_EXCHANGE;
  const subscribes = rights.broadcasts.length > 0;
  const broadcastKeys = rights.broadcasts.flatMap((key) => bindingKeys(BROADCASTS[key].events));
  const ownQueues = rights.consumes.map((key) => namespace + QUEUES[key].name);
  return {
    configure: onlyThese(subscribes ? [SERVER_NAMED_QUEUE] : []),
    write: onlyThese([
      ...(rights.publishes.length > 0 ? [literal(exchange)] : []),
      ...ownQueues.map((queue) => literal(replayExchangeName(queue))),
      ...(subscribes ? [SERVER_NAMED_QUEUE] : []),
    ]),
    read: onlyThese([
      ...ownQueues.flatMap((queue) => [literal(queue), literal(deadLetterQueueName(queue))]),
      ...(subscribes ? [literal(exchange), SERVER_NAMED_QUEUE] : []),
    ]),
    topic: {
      exchange,
      write: onlyThese(rights.publishes.map((type) => literal(EVENTS[type].routingKey))),
      read: onlyThese(broadcastKeys.map(literal)),
    },
  };
}

/** The default user of every service the deployment runs, without passwords (the provisioner sets them). */
export function defaultBrokerUsers(namespace: string, deployment: Deployment): BrokerUser[] {
  const deployed: readonly BusParticipant[] = deployedServices(deployment);
  return BUS_PARTICIPANTS.filter((participant) => deployed.includes(participant)).map((participant) => ({
    participant,
    username: brokerUsername(participant, namespace),
  }));
}

/**
 * The users part of RabbitMQ definitions (the format of `rabbitmqctl import_definitions` and the management API):
 * each user with exactly its rights. A user without a password gets an empty hash: it exists with its rights and
 * cannot log in with a password until one is set.
 */
export function brokerUserDefinitions(users: BrokerUser[], namespace: string, vhost: string) {
  return {
    users: users.map((user) => ({
      name: user.username,
      ...(user.password === undefined
        ? { password_hash: '', hashing_algorithm: 'rabbit_password_hashing_sha256' }
        : { password: user.password }),
      tags: [],
      limits: {},
    })),
    permissions: users.map((user) => {
      const { configure, write, read } = brokerPermissionsOf(user.participant, namespace);
      return { user: user.username, vhost, configure, write, read };
    }),
    topic_permissions: users.map((user) => {
      const { topic } = brokerPermissionsOf(user.participant, namespace);
      return { user: user.username, vhost, ...topic };
    }),
  };
}

/** RabbitMQ definitions for a deployment's topology and the given users (see `brokerUserDefinitions`). */
export function brokerDefinitions(
  users: BrokerUser[],
  namespace: string,
  vhost: string,
  deployment: Deployment,
) {
  const topology = brokerTopology(namespace, deployment);
  const accounts = brokerUserDefinitions(users, namespace, vhost);
  return {
    rabbit_version: '3.13.0',
    users: accounts.users,
    vhosts: [{ name: vhost }],
    permissions: accounts.permissions,
    topic_permissions: accounts.topic_permissions,
    parameters: [],
    global_parameters: [],
    policies: [],
    exchanges: topology.exchanges.map(({ name, type }) => ({
      name,
      vhost,
      type,
      durable: true,
      auto_delete: false,
      internal: false,
      arguments: {},
    })),
    queues: topology.queues.map(({ name, arguments: args }) => ({
      name,
      vhost,
      durable: true,
      auto_delete: false,
      arguments: args,
    })),
    bindings: topology.bindings.map(({ exchange, queue, routingKey }) => ({
      source: exchange,
      vhost,
      destination: queue,
      destination_type: 'queue',
      routing_key: routingKey,
      arguments: {},
    })),
  };
}
