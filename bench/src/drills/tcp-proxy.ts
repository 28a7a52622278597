import net from 'node:net';

/** A TCP relay on 127.0.0.1 that can be cut: every connection through it dropped and new ones refused. */
export interface TcpProxy {
  port: number;
  /** Drops every open connection and resets new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Connections dropped or refused while cut. */
  refused(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const links = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let open = true;
  let refused = 0;
  const server = net.createServer((client) => {
    if (!open) {
      refused += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(port, host);
    const link = { client, upstream };
    links.add(link);
    const drop = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const link of links) {
        refused += 1;
        link.client.resetAndDestroy();
        link.upstream.resetAndDestroy();
      }
      links.clear();
    },
    restore() {
      open = true;
    },
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) {
          link.client.destroy();
          link.upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
