import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

export interface ReceivedCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the n-th call (1-based) to a path: answer a status, or hold the call open. */
export type Behaviour = (call: number) => { status: number; body?: string } | 'hang';

/** A webhook receiver on 127.0.0.1: records every call, answers as each path's behaviour says (200 by default). */
export interface TestReceiver {
  url: string;
  port: number;
  calls(path?: string): ReceivedCall[];
  on(path: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const calls: ReceivedCall[] = [];
  const behaviours = new Map<string, Behaviour>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      calls.push({
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const count = calls.filter((call) => call.path === path).length;
      const answer = (behaviours.get(path) ?? (() => ({ status: 200, body: 'ok' })))(count);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls: (path) => calls.filter((call) => path === undefined || call.path === path),
    on: (path, behaviour) => behaviours.set(path, behaviour),
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
