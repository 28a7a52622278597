import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The gateway's end of the connection the request came over. */
  remotePort: number | undefined;
}

export type FakeHandler = (req: RecordedRequest, res: ServerResponse) => void;

export interface FakeUpstream {
  url: string;
  received: RecordedRequest[];
  /** Replaces how the next requests are answered (default: 200 `{ upstream, path }`). */
  answer(handler: FakeHandler): void;
  close(): Promise<void>;
}

/** A tiny HTTP service that records every request it gets, raw body included, for the gateway to proxy to. */
export async function startFakeUpstream(name: string): Promise<FakeUpstream> {
  const received: RecordedRequest[] = [];
  const fallback: FakeHandler = (req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ upstream: name, path: req.url }));
  };
  let handler = fallback;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        remotePort: req.socket.remotePort,
      };
      received.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (next) => {
      handler = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
