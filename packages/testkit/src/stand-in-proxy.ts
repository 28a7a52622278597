import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { buildProblem, type ErrorCode } from '@payments/contracts';

export interface SeenRequest {
  method: string;
  /** The path and query, as the client sent them (with its version prefix). */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as sent (empty without one). */
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What the stand-in does with a request: pass it on to the gateway (undefined), pass it on to another path and query
 * (`forwardTo`), answer it itself, pass it on and answer something else (the gateway acted, the answer is lost on
 * the way back), hold it open, or drop the connection.
 */
export type Action =
  undefined | { forwardTo: string } | { reply: Reply } | { forwardThenReply: Reply } | 'hang' | 'reset';

export interface StandInProxy {
  url: string;
  /** Every request it received, oldest first. */
  seen(filter?: (request: SeenRequest) => boolean): SeenRequest[];
  /** Decides each request from now on (undefined: forward it). */
  use(rule: (request: SeenRequest) => Action): void;
  close(): Promise<void>;
}

/** A problem+json answer as the services build it (the contracts' shape), for the answers the stand-in makes itself. */
export const problemReply = (
  status: number,
  code: ErrorCode,
  headers: Record<string, string> = {},
  detail = `the stand-in answered ${status}`,
): Reply => ({
  status,
  headers: { 'content-type': 'application/problem+json', ...headers },
  body: JSON.stringify({ ...buildProblem(code, detail, '/'), status }),
});

/**
 * A small HTTP stand-in in front of the gateway, on 127.0.0.1: forwards each request as it came (hop-by-hop
 * headers aside) unless the current rule says otherwise, so that a test can see what a client sent, make the network
 * or the gateway fail once, and let everything else be the real system.
 */
export async function startStandInProxy(target: string): Promise<StandInProxy> {
  const seen: SeenRequest[] = [];
  let rule: (request: SeenRequest) => Action = () => undefined;
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const forward = async (request: SeenRequest, body: Buffer, url = request.url) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || ['host', 'connection', 'content-length'].includes(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return fetch(target + url, {
      method: request.method,
      headers,
      body: body.length > 0 ? body : undefined,
    });
  };

  const send = (res: ServerResponse, reply: Reply) =>
    res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request: SeenRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: body.toString('utf8'),
        at: Date.now(),
      };
      seen.push(request);
      const action = rule(request);
      if (action === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (action === 'reset') {
        req.socket.destroy();
        return;
      }
      if (action && 'reply' in action) {
        send(res, action.reply);
        return;
      }
      forward(request, body, action && 'forwardTo' in action ? action.forwardTo : undefined).then(
        async (answer) => {
          const text = Buffer.from(await answer.arrayBuffer());
          if (action && 'forwardThenReply' in action) return send(res, action.forwardThenReply);
          const headers: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))
              headers[name] = value;
          });
          res.writeHead(answer.status, headers).end(text);
        },
        () => send(res, { status: 599, body: 'the gateway could not be reached' }),
      );
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen: (filter) => seen.filter((request) => !filter || filter(request)),
    use(next) {
      rule = next;
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
