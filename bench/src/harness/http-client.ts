import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';

export interface HttpCall {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A call as an API client makes it: its bearer token, `headers`, and `json` as the body when there is one. */
export function bearerCall(
  method: string,
  path: string,
  token: string,
  json?: unknown,
  headers: Record<string, string> = {},
): HttpCall {
  return {
    method,
    path,
    headers: {
      authorization: `Bearer ${token}`,
      ...headers,
      ...(json !== undefined && { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  };
}

export interface HttpAnswer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

export interface HttpClient {
  send(call: HttpCall): Promise<HttpAnswer>;
  /** Sends JSON and parses the answer; throws unless the status is one of `expect`. */
  json<T>(call: HttpCall & { json?: unknown; token?: string }, expect?: number[]): Promise<T>;
  close(): void;
}

/**
 * A keep-alive HTTP/1.1 client on an undici pool: far cheaper per request than fetch or node:http's client (26
 * against 65 µs of CPU per request, measured here), which matters when the load generator shares two cores with
 * the system it measures.
 */
export function createHttpClient(baseUrl: string, maxSockets = 64, timeoutMs = 30_000): HttpClient {
  const pool = new Pool(new URL(baseUrl).origin, {
    connections: maxSockets,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const send = async (call: HttpCall): Promise<HttpAnswer> => {
    const answer = await pool.request({
      method: call.method as 'GET',
      path: call.path,
      headers: call.headers,
      body: call.body,
    });
    return { status: answer.statusCode, body: await answer.body.text(), headers: answer.headers };
  };

  return {
    send,
    async json<T>(call: HttpCall & { json?: unknown; token?: string }, expect = [200, 201, 202]) {
      const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
      if (call.token) headers.authorization = `Bearer ${call.token}`;
      let body = call.body;
      if (call.json !== undefined) {
        body = JSON.stringify(call.json);
        headers['content-type'] = 'application/json';
      }
      const answer = await send({ method: call.method, path: call.path, headers, body });
      if (!expect.includes(answer.status)) {
        throw new Error(
          `${call.method} ${call.path} answered ${answer.status}: ${answer.body.slice(0, 300)}`,
        );
      }
      return (answer.body ? JSON.parse(answer.body) : null) as T;
    },
    close: () => void pool.destroy(),
  };
}
