import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** The local port to point a service at instead of the target's. */
  port: number;
  /** Drops every open connection and refuses new ones until restored: the target seems to be gone. */
  cut(): void;
  restore(): void;
  /** Connections dropped or refused while cut. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * A TCP hop between a service and PostgreSQL or RabbitMQ that a test can cut and restore, so a dependency
 * really goes away for that service alone. While cut, it keeps its port and resets each new connection.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  let refused = 0;
  const clients = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server = createServer((client) => {
    track(client);
    clients.add(client);
    client.on('close', () => clients.delete(client));
    if (isCut) {
      refused += 1;
      return void client.destroy();
    }
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const cut = () => {
    isCut = true;
    refused += clients.size;
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut,
    restore: () => {
      isCut = false;
    },
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function viaProxy(url: string, proxy: Pick<TcpProxy, 'port'>): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
