/**
 * The nodes of a RabbitMQ cluster a service may connect to, as AMQP_URL names them (one URL, or several separated by
 * commas), and the one to try next. amqplib's recovery reconnects with the connection options it was given: an
 * object in its URL form (hostname, port, credentials, vhost, tuning), read again at each attempt, so pointing that
 * object at the next node before an attempt is how a lost or unreachable node gives way to a surviving one.
 */
export interface BrokerNodes {
  /** The object amqplib connects with: always the current node. */
  readonly target: BrokerAddress;
  /** The current node, for logs: `host:port`, never the credentials. */
  current(): string;
  /** Moves to the next node (round robin); with one node, stays on it. */
  next(): void;
  readonly count: number;
}

/** amqplib's URL object (its `connect` reads these fields). */
export interface BrokerAddress {
  protocol: string;
  hostname: string;
  port: number;
  username: string;
  password: string;
  vhost: string | undefined;
  heartbeat?: number;
  frameMax?: number;
  channelMax?: number;
  locale?: string;
}

/** Splits AMQP_URL into its nodes' URLs: each a whole `amqp://` or `amqps://` URL, credentials included. */
export function brokerUrls(value: string): string[] {
  const urls = value
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  if (urls.length === 0) throw new Error('AMQP_URL names no broker');
  return urls;
}

const TUNING = ['heartbeat', 'frameMax', 'channelMax'] as const;

function addressOf(url: string): BrokerAddress {
  const parsed = new URL(url);
  const protocol = parsed.protocol.replace(/:$/, '');
  if (protocol !== 'amqp' && protocol !== 'amqps')
    throw new Error(`a broker URL must be amqp:// or amqps:// (got ${protocol}://)`);
  const address: BrokerAddress = {
    protocol,
    hostname: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : protocol === 'amqp' ? 5672 : 5671,
    // As amqplib reads a string URL: guest/guest when it names no user.
    username: parsed.username ? decodeURIComponent(parsed.username) : 'guest',
    password: parsed.username ? decodeURIComponent(parsed.password) : 'guest',
    // amqplib unescapes the vhost itself; an empty path is the default vhost.
    vhost: parsed.pathname.length > 1 ? parsed.pathname.slice(1) : undefined,
  };
  for (const name of TUNING) {
    const value = parsed.searchParams.get(name);
    if (value !== null) address[name] = Number.parseInt(value, 10);
  }
  const locale = parsed.searchParams.get('locale');
  if (locale !== null) address.locale = locale;
  return address;
}

export function brokerNodes(value: string): BrokerNodes {
  const addresses = brokerUrls(value).map(addressOf);
  let index = 0;
  const target = { ...(addresses[0] as BrokerAddress) };
  const point = () => {
    const address = addresses[index] as BrokerAddress;
    for (const key of Object.keys(target) as (keyof BrokerAddress)[]) delete target[key];
    Object.assign(target, address);
  };
  return {
    target,
    current: () => `${target.hostname}:${target.port}`,
    next() {
      index = (index + 1) % addresses.length;
      point();
    },
    count: addresses.length,
  };
}
