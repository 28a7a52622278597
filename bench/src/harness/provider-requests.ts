import amqp, { type ChannelModel } from 'amqplib';
import { EVENTS, EVENTS_EXCHANGE } from '@payments/contracts';
import { sleep } from './load.js';

export type MoneyRequestType = 'DepositRequested' | 'WithdrawalRequested';

/** A deposit or withdrawal the ledger handed to the provider, as the provider reads it off the broker. */
export interface MoneyRequest {
  type: MoneyRequestType;
  /** The id of the DepositRequested / WithdrawalRequested event; a redelivery of the event repeats it. */
  eventId: string;
  transactionId: string;
  accountId: string;
  /** Minor units. */
  amount: number;
  currency: string;
  /** When it arrived here, ms since epoch. */
  receivedAt: number;
}

/** The deposits or withdrawals a payment provider has received, as the provider sees them. */
export interface ProviderRequests {
  /** Resolves true once the request for the transaction has arrived, false if it has not within `timeoutMs`. */
  received(transactionId: string, timeoutMs: number): Promise<boolean>;
  /** Every transaction whose request arrived. */
  ids(): ReadonlySet<string>;
  /** Requests that arrived again for a transaction already seen (the outbox publishes at least once). */
  redeliveries(): number;
  close(): Promise<void>;
}

function parseRequest(type: MoneyRequestType, content: Buffer): MoneyRequest | null {
  try {
    const event = JSON.parse(content.toString('utf8')) as {
      id?: string;
      data?: { transaction_id?: string; account_id?: string; amount?: number; currency?: string };
    };
    const data = event.data;
    if (!event.id || !data?.transaction_id || data.amount === undefined || !data.currency) return null;
    return {
      type,
      eventId: event.id,
      transactionId: data.transaction_id,
      accountId: data.account_id ?? '',
      amount: data.amount,
      currency: data.currency,
      receivedAt: Date.now(),
    };
  } catch {
    return null;
  }
}

/**
 * A private, auto-deleted queue bound to the system's `deposit.requested` and/or `withdrawal.requested` routing
 * keys: the bench or drill plays the provider and may only confirm or pay out what was handed to it, exactly as a
 * real one. `onRequest` sees each transaction's first request (a redelivery is only counted).
 */
export async function receiveProviderRequests(
  amqpUrl: string,
  namespace: string,
  types: readonly MoneyRequestType[],
  onRequest?: (request: MoneyRequest) => void,
): Promise<ProviderRequests> {
  const exchange = `${namespace}${EVENTS_EXCHANGE}`;
  const connection: ChannelModel = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
  const typeOf = new Map<string, MoneyRequestType>();
  for (const type of types) {
    await channel.bindQueue(queue, exchange, EVENTS[type].routingKey);
    typeOf.set(EVENTS[type].routingKey, type);
  }
  const arrived = new Set<string>();
  let redeliveries = 0;
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      const type = typeOf.get(message.fields.routingKey);
      const request = type && parseRequest(type, message.content);
      // Not a request event: nothing for the provider to do.
      if (!request) return;
      if (arrived.has(request.transactionId)) {
        redeliveries += 1;
        return;
      }
      arrived.add(request.transactionId);
      onRequest?.(request);
    },
    { noAck: true },
  );
  return {
    async received(transactionId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!arrived.has(transactionId)) {
        if (Date.now() > deadline) return false;
        await sleep(20);
      }
      return true;
    },
    ids: () => arrived,
    redeliveries: () => redeliveries,
    close: () => connection.close().catch(() => undefined),
  };
}
