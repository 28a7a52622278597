import { StringDecoder } from 'node:string_decoder';
import type { Express, Request, RequestHandler, Response } from 'express';
import {
  answerError,
  assignRequestId,
  DEFAULT_JSON_BODY_LIMIT_BYTES,
  logRequests,
  type FrontHandler,
  type Logger,
  type Metrics,
} from '@payments/service-kit';
import { MONEY_ROUTES, type MoneyAnswer, type MoneyOperation, type MoneyRequests } from './money-handlers.js';

export interface LeanMoneyDeps {
  /** The app every other request goes to; its prototypes are the requests' and responses' (kit's listen). */
  app: Express;
  logger: Logger;
  metrics: Metrics;
  /** The routes' token check (requireAuth). */
  auth: RequestHandler;
  /** The routes' own money requests (one set per process). */
  money: MoneyRequests;
  /** The app's JSON body limit. */
  maxBodyBytes?: number;
}

/**
 * The paths served here: lower-case, no trailing slash, no query string, and an id of letters, digits and dashes
 * (a UUID, or something pathId refuses with 404 as the routes do). Express's router also matches other spellings
 * (any case, a trailing slash, percent-encoded ids, a query): those are left to it.
 */
const MONEY_PATH = /^\/account\/([0-9A-Za-z-]+)\/(deposit|withdraw|transfer)$/;
/** Spellings of a JSON body in UTF-8 (body-parser's default and only accepted charset family). */
const JSON_CONTENT_TYPES = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
]);
const CONTENT_LENGTH = /^[1-9]\d{0,9}$/;
/** As body-parser's strict JSON parser: a body must open with an object or an array. */
const FIRST_NON_WHITESPACE = /^[ \t\n\r]*([^ \t\n\r]|$)/;
const BOM = 0xfeff;

function noop() {}

/** An error the kit's toProblem reads as body-parser's (by its `type`). */
function bodyError(message: string, type: string): Error {
  return Object.assign(new Error(message), { status: 400, type });
}

/** The body as body-parser's json() reads it: UTF-8 via a string decoder, a leading BOM dropped, strict JSON. */
function parseBody(raw: Buffer): unknown {
  const decoder = new StringDecoder('utf8');
  let text = decoder.write(raw);
  if (text.charCodeAt(0) === BOM) text = text.slice(1);
  text += decoder.end();
  // An empty body (a lone BOM here: empty ones are left to the app) is {} there.
  if (text.length === 0) return {};
  const opening = text[0] === '{' || text[0] === '[' ? text[0] : FIRST_NON_WHITESPACE.exec(text)?.[1];
  if (opening !== '{' && opening !== '[') throw bodyError('strict violation', 'entity.parse.failed');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw bodyError('invalid JSON', 'entity.parse.failed');
  }
}

/**
 * The money requests (deposit, withdraw, transfer), served on node's http handler in front of the Express app:
 * the same steps in the same order as the app's pipeline — request id, access log, HTTP metrics, body read and
 * parsed as body-parser's json() does, token check, the routes' own money request (money-handlers.ts) — errors
 * answered by the app's own error handler, the 202 written with the headers res.json would write, in the same
 * order. Taken only when nothing in it needs Express's machinery to be answered the same: `POST`, a path spelled
 * as MONEY_PATH, a `Content-Length` body of 1 byte to the limit, no `Transfer-Encoding` or `Content-Encoding`,
 * `Content-Type: application/json` (optionally `; charset=utf-8`). Everything else — other methods and paths,
 * other spellings of these paths, other content types and charsets (415), compressed, chunked, empty or too
 * large (413) bodies — goes to the app untouched, which answers as it always did.
 */
export function leanMoneyHandler(deps: LeanMoneyDeps): FrontHandler {
  const { app, metrics, auth, money } = deps;
  const limit = deps.maxBodyBytes ?? DEFAULT_JSON_BODY_LIMIT_BYTES;
  // The kit's own access-log middleware (it also gives these requests `req.log`) and HTTP metrics.
  const logAccess = logRequests(app, deps.logger);
  const observe = metrics.middleware;

  const fail = (error: unknown, req: Request, res: Response) => answerError(error, req, res);

  /** What res.status(202).location(…).set(…).json(…) writes (sendMoneyAnswer), without its look-ups. */
  const answer = (res: Response, { location, replayed, body }: MoneyAnswer) => {
    const text = JSON.stringify(body);
    res.statusCode = 202;
    res.location(location);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', String(Buffer.byteLength(text)));
    res.end(text);
  };

  /** The route: after the body, as in the app (parser errors are answered before any route, as 'unmatched'). */
  const route = (req: Request, res: Response, operation: MoneyOperation, id: string, body: unknown) => {
    (res.locals as Record<string, unknown>).routeTemplate = MONEY_ROUTES[operation];
    req.params = { id };
    req.body = body;
    const proceed = (error?: unknown) => {
      if (error) return fail(error, req, res);
      money[operation](req)
        .then((result) => answer(res, result))
        .catch((reason: unknown) => fail(reason, req, res));
    };
    // As Express 5: a rejected promise from the middleware is its error.
    Promise.resolve(auth(req, res, proceed)).catch((reason: unknown) => fail(reason, req, res));
  };

  return (incoming, outgoing) => {
    if (incoming.method !== 'POST') return false;
    const url = incoming.url ?? '';
    const match = MONEY_PATH.exec(url);
    if (!match) return false;
    const { headers } = incoming;
    const length = headers['content-length'];
    if (
      length === undefined ||
      !CONTENT_LENGTH.test(length) ||
      Number(length) > limit ||
      headers['transfer-encoding'] !== undefined ||
      headers['content-encoding'] !== undefined ||
      !JSON_CONTENT_TYPES.has(headers['content-type']?.toLowerCase() ?? '') ||
      // Born with the app's prototypes (kit's listen), as Express would make them.
      Object.getPrototypeOf(incoming) !== app.request ||
      Object.getPrototypeOf(outgoing) !== app.response
    ) {
      return false;
    }
    const req = incoming as Request;
    const res = outgoing as Response;
    const id = match[1] as string;
    const operation = match[2] as MoneyOperation;

    // What Express's app.handle and router give every request; the error rendering and the logs use them.
    req.res = res;
    res.req = req;
    req.originalUrl = url;
    req.baseUrl = '';
    res.locals = Object.create(null) as Response['locals'];
    // The app's first middlewares: the request id, the access log, the latency metric.
    assignRequestId(req, res);
    logAccess(req, res, noop);
    observe(req, res, noop);

    // As raw-body: at most Content-Length bytes arrive (node's parser), which is within the limit.
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const abandon = (error: unknown) => {
      if (settled) return;
      settled = true;
      fail(error, req, res);
    };
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      let body: unknown;
      try {
        body = parseBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
      } catch (error) {
        return fail(error, req, res);
      }
      route(req, res, operation, id, body);
    });
    // A caller that went away: answered (to no one) and logged as the app does after raw-body's error.
    req.on('aborted', () => abandon(bodyError('request aborted', 'request.aborted')));
    req.on('error', abandon);
    return true;
  };
}
