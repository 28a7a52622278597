import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import helmet from 'helmet';
import { consoleDist } from '@payments/console';
import { AppError } from '@payments/service-kit';

type Directives = Record<string, string[]>;

/**
 * The console's policy: its own scripts, styles and calls only, nothing inline, no frames. The payment page has a
 * policy of its own (domain/payment-page.ts): the same, less `data:` images, plus its provider's origins.
 */
export const STRICT_POLICY: Readonly<Directives> = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** A Content-Security-Policy header of STRICT_POLICY with `extra` sources added to (not replacing) its own. */
export function strictContentSecurityPolicy(extra: Directives = {}): RequestHandler {
  const directives: Directives = { ...STRICT_POLICY };
  for (const [name, sources] of Object.entries(extra))
    directives[name] = [...(directives[name] ?? []).filter((source) => source !== "'none'"), ...sources];
  return helmet.contentSecurityPolicy({ useDefaults: false, directives });
}

const notBuilt = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'The console has not been built: run `pnpm start` (it builds it) or `node console/build.js`',
  );

/**
 * Sends one page of the build (`index.html`, `pay.html`), read at each request so a rebuild is served at once;
 * never cached by the browser, since it names the hashed assets of its build. Missing: 503 SERVICE_UNAVAILABLE.
 * `render` may add to the page before it is sent (the payment page's settings).
 */
export function builtPage(
  file: string,
  directory: string = consoleDist,
  render: (html: string) => string = (html) => html,
): RequestHandler {
  const page = path.join(directory, file);
  return (_req, res, next) => {
    readFile(page, 'utf8').then(
      (html) => {
        res.set('Cache-Control', 'no-cache').type('html').send(render(html));
      },
      () => next(notBuilt()),
    );
  };
}

/**
 * The build's hashed files (`/assets/…`, mounted where the page's `base` says): cached for a year, never
 * revalidated, since a new build names new files. An unknown one is a 404, never a page.
 */
export function builtAssets(directory: string = consoleDist): RequestHandler {
  const assets = express.static(path.join(directory, 'assets'), {
    index: false,
    immutable: true,
    maxAge: '365d',
    fallthrough: true,
    redirect: false,
  });
  return (req, res, next) => assets(req, res, () => next(new AppError('RESOURCE_NOT_FOUND', 'No such file')));
}

/** Whether the console has been built in `directory` (for a line at start-up). */
export const isConsoleBuilt = (directory: string = consoleDist) =>
  access(path.join(directory, 'index.html')).then(
    () => true,
    () => false,
  );

/**
 * /console and below, same origin as the API: the build's assets, and the single-page app's index.html for every
 * other path (its own router shows the page), all under the strict policy.
 */
export function consoleRoutes(directory: string = consoleDist): Router {
  const router = Router();
  const policy = strictContentSecurityPolicy();
  const page = builtPage('index.html', directory);
  router.use('/console/assets', policy, builtAssets(directory));
  router.get(['/console', '/console/', '/console/*rest'], policy, page);
  return router;
}
