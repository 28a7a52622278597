import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type RecoveringChannelModel,
} from 'amqplib';
import type { Logger } from '../../logger.js';
import { BusUnavailableError } from '../event-bus.js';
import { brokerNodes } from './broker-nodes.js';

export interface BrokerConnectionOptions {
  /** AMQP_URL: one broker, or a cluster's nodes separated by commas (each attempt after a failure tries the next). */
  url: string;
  logger: Logger;
  /**
   * Run on every new connection before it counts as connected (topology, publisher, consumers); a failure closes
   * that connection and a later attempt tries again.
   */
  setup: (model: ChannelModel) => Promise<void>;
  /**
   * How long a set-up may take before that connection is given up and the next attempt (the next node) starts over:
   * a channel call the broker never answers (a quorum queue whose leader is being elected after a node's loss)
   * would otherwise hold the connection, set up halfway, for ever. Default 60 s: a set-up takes well under a second,
   * but a machine starved of CPU (a node restarting beside every other process) must not turn slow into never.
   */
  setupTimeoutMs?: number;
  /**
   * How long opening a connection may take, from the TCP connect to the end of the AMQP handshake: a node that
   * accepts connections and never answers (cut off, or stalled) would otherwise hold the attempt for ever, and no
   * other node would be tried. Default 10 s.
   */
  handshakeTimeoutMs?: number;
  /** Told when an established connection is lost; amqplib's recovery is already retrying. */
  onLost: (error: Error) => void;
}

export interface BrokerConnection {
  /** Starts connecting; resolves once connected, or after `timeoutMs` with the attempts going on behind. */
  start(timeoutMs: number): Promise<void>;
  /** The connection being set up or in use, or null while there is none. */
  current(): ChannelModel | null;
  /** Runs work on a channel of its own, closed afterwards (closing returns what it took unacknowledged). */
  withChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T>;
  withConfirmChannel<T>(work: (channel: ConfirmChannel) => Promise<T>): Promise<T>;
  /** Stops recovering and closes the connection. */
  close(): Promise<void>;
}

/** Retries every 250 ms at first, then backs off to about 5 s; a broker that is down for long is retried forever. */
const RECOVERY = {
  initialDelay: 250,
  factor: 2,
  maxDelay: 5_000,
  jitter: 0.2,
  maxRetries: Infinity,
} as const;

/** A failed attempt is logged on the first and then every 20th, so a broker that stays down does not flood the log. */
const LOG_EVERY_ATTEMPTS = 20;

/**
 * One connection to RabbitMQ, re-established by amqplib's connection recovery after a loss: to the next of the
 * cluster's nodes, so a node that is lost or cut off gives way to one that survives (quorum queues serve on any).
 */
export function createBrokerConnection(options: BrokerConnectionOptions): BrokerConnection {
  const { logger } = options;
  const nodes = brokerNodes(options.url);
  let recovering: Promise<RecoveringChannelModel> | null = null;
  let model: ChannelModel | null = null;
  let closed = false;

  const setupTimeoutMs = options.setupTimeoutMs ?? 60_000;
  const setup = async (opened: ChannelModel) => {
    // Recovery listens for errors only once set-up is done; unheard, an error event would throw.
    opened.on('error', () => undefined);
    // Current from the start of set-up, so a consumer added meanwhile starts on it rather than waiting for the next.
    model = opened;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `setting up the connection to ${nodes.current()} took longer than ${setupTimeoutMs} ms; trying again`,
            ),
          ),
        setupTimeoutMs,
      );
    });
    try {
      // Given up, the set-up is no longer current (the bus's steps check) and recovery closes its connection.
      await Promise.race([options.setup(opened), late]);
    } catch (error) {
      if (model === opened) model = null;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  const open = async (): Promise<RecoveringChannelModel> => {
    const connection = await amqp.connect(nodes.target, {
      clientProperties: { connection_name: 'payments' },
      // amqplib's socket timeout, lifted once the handshake is done.
      timeout: options.handshakeTimeoutMs ?? 10_000,
      recovery: { ...RECOVERY, setup, waitForConnect: false },
    });
    connection.on('connect', () => logger.info({ broker: nodes.current() }, 'connected to RabbitMQ'));
    connection.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ connection error'));
    connection.on('disconnect', (error: Error) => {
      model = null;
      logger.warn({ err: error, broker: nodes.current() }, 'lost the RabbitMQ connection; reconnecting');
      options.onLost(error);
    });
    // Before every attempt after a loss or a failure: the node that failed is tried again only after the others.
    connection.on('reconnect-scheduled', ({ attempt, error }: { attempt: number; error: Error }) => {
      const failed = nodes.current();
      nodes.next();
      if (attempt === 1 || attempt % LOG_EVERY_ATTEMPTS === 0)
        logger.warn(
          { err: error, attempt, broker: failed, next: nodes.current() },
          'cannot reach RabbitMQ; retrying',
        );
    });
    return connection;
  };

  const requireModel = () => {
    if (!model) throw new BusUnavailableError('not connected to RabbitMQ');
    return model;
  };

  /** Runs work on a channel opened for it, closed afterwards whatever the work came to. */
  const onOwnChannel = async <C extends Channel, T>(
    open: (opened: ChannelModel) => Promise<C>,
    work: (channel: C) => Promise<T>,
  ): Promise<T> => {
    const channel = await open(requireModel());
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  return {
    async start(timeoutMs) {
      if (closed) return;
      recovering ??= open();
      const connection = await recovering;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      // The first connection may take longer than start is willing to wait; recovery keeps at it.
      await Promise.race([
        connection.waitForConnect().then(
          () => undefined,
          () => undefined,
        ),
        timeout,
      ]);
      clearTimeout(timer);
    },

    current: () => model,

    withChannel: (work) => onOwnChannel((opened) => opened.createChannel(), work),

    withConfirmChannel: (work) => onOwnChannel((opened) => opened.createConfirmChannel(), work),

    async close() {
      closed = true;
      model = null;
      const connection = await recovering;
      await connection?.close().catch(() => undefined);
    },
  };
}
