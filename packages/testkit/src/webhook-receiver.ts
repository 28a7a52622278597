import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { eventually, type EventuallyOptions } from './ports.js';

export interface ReceivedCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the n-th call (1-based) to a path: answer a status, or hold the call open. */
export type Behaviour = (call: number) => { status: number; body?: string; delayMs?: number } | 'hang';

/** A webhook receiver on 127.0.0.1: records every call, answers as each path's behaviour says (200 by default). */
export interface TestReceiver {
  url: string;
  port: number;
  calls(path?: string): ReceivedCall[];
  /** The calls to `path` once `until` holds of them (by default, once there is one), waited for as `eventually`. */
  waitForCalls(
    path: string,
    until?: (calls: ReceivedCall[]) => boolean,
    options?: EventuallyOptions,
  ): Promise<ReceivedCall[]>;
  on(path: string, behaviour: Behaviour): void;
  /** The most calls to a path that were open (received, not yet answered) at once. */
  mostOpen(path: string): number;
  close(): Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const calls: ReceivedCall[] = [];
  const behaviours = new Map<string, Behaviour>();
  const hanging = new Set<ServerResponse>();
  const open = new Map<string, number>();
  const mostOpen = new Map<string, number>();
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
      open.set(path, (open.get(path) ?? 0) + 1);
      mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path) ?? 0));
      res.on('close', () => open.set(path, (open.get(path) ?? 1) - 1));
      const answer: ReturnType<Behaviour> = (behaviours.get(path) ?? (() => ({ status: 200, body: 'ok' })))(
        count,
      );
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const send = () =>
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const callsTo = (path?: string) => calls.filter((call) => path === undefined || call.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls: callsTo,
    waitForCalls: (path, until = (found) => found.length > 0, options) =>
      eventually(async () => callsTo(path), until, options),
    on: (path, behaviour) => behaviours.set(path, behaviour),
    mostOpen: (path) => mostOpen.get(path) ?? 0,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** webhook-delivery's settings for a receiver on 127.0.0.1 (allowed in tests only), retried within a second. */
export const DELIVERY_TO_RECEIVER: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  DELIVERY_BACKOFF_BASE_MS: '100',
  DELIVERY_BACKOFF_MAX_MS: '1000',
  DELIVERY_POLL_INTERVAL_MS: '100',
};
