import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import {
  buildProblem,
  compileSchema,
  ERRORS,
  ProblemDetails,
  type ErrorCode,
  type FieldError,
} from '@payments/contracts';

/** A request the stub received. */
export interface StubRequest {
  method: string;
  /** The path below the version prefix, with the query. */
  path: string;
  /** The API version the path's prefix named (`/v1.1/…` → `1.1`); null without one. */
  version: string | null;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON (null without one). */
  body: unknown;
}

export interface StubReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type StubAnswer = StubReply | ((request: StubRequest) => StubReply);

/**
 * An HTTP stand-in for the API that models nothing: each test says what an operation answers, and the answer is
 * checked against the contract's schema for it (a reply that breaks the contract fails the test that wrote it).
 * What it was asked is kept, oldest first.
 */
export interface ContractStub {
  url: string;
  requests: StubRequest[];
  /**
   * From now on, answers `method` on `path` (below the version prefix; a string matches the path without its query
   * exactly, a RegExp the path with its query) with `answer`; a later rule for the same request wins.
   */
  on(method: string, path: string | RegExp, answer: StubAnswer): void;
  /** Forgets every rule (the requests are kept). */
  reset(): void;
  close(): Promise<void>;
}

/** A JSON answer the contract's `schema` accepts: it throws, naming what is off, otherwise. */
export function contractReply<S extends TSchema>(schema: S, body: Static<S>, status = 200): StubReply {
  const checked = compileSchema(schema)(body);
  if (!checked.ok) throw new Error(`the stub's answer breaks the contract: ${checked.errors.join('; ')}`);
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A problem+json answer as the services build it, with the status the contracts give `code`. */
export function contractProblem(code: ErrorCode, detail: string, errors?: FieldError[]): StubReply {
  const { body } = contractReply(ProblemDetails, buildProblem(code, detail, '/', errors));
  return { status: ERRORS[code].status, headers: { 'content-type': 'application/problem+json' }, body };
}

/** A CSV answer, as the reports that offer `format=csv` send it. */
export const csvReply = (rows: string[]): StubReply => ({
  status: 200,
  headers: { 'content-type': 'text/csv; charset=utf-8' },
  body: rows.map((row) => `${row}\r\n`).join(''),
});

export async function startContractStub(): Promise<ContractStub> {
  const requests: StubRequest[] = [];
  let rules: { method: string; path: string | RegExp; answer: StubAnswer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '/';
      const version = /^\/v(\d+\.\d+)(?=\/|$)/.exec(url)?.[1] ?? null;
      const path = version === null ? url : url.slice(`/v${version}`.length) || '/';
      const text = Buffer.concat(chunks).toString('utf8');
      const request: StubRequest = {
        method: req.method ?? 'GET',
        path,
        version,
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : null,
      };
      requests.push(request);
      const rule = rules.findLast(
        (r) =>
          r.method === request.method &&
          (typeof r.path === 'string' ? r.path === path.split('?')[0] : r.path.test(path)),
      );
      const reply = !rule
        ? contractProblem('RESOURCE_NOT_FOUND', `The stub has no answer for ${request.method} ${path}`)
        : typeof rule.answer === 'function'
          ? rule.answer(request)
          : rule.answer;
      res.writeHead(reply.status, reply.headers).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (method, path, answer) => void rules.push({ method, path, answer }),
    reset: () => void (rules = []),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
