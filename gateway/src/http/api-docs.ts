import { createRequire } from 'node:module';
import path from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';

const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The files of swagger-ui-dist the page loads; its sample index and initializer are not served. */
const ASSETS = new Set(['/swagger-ui.css', '/index.css', '/swagger-ui-bundle.js', '/favicon-32x32.png']);

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Payments API</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
    <link rel="stylesheet" href="/docs/assets/index.css">
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/docs-init.js"></script>
  </body>
</html>
`;

// A file rather than an inline script, so the policy needs no 'unsafe-inline' for scripts.
const INITIALIZER = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** What the page needs and nothing more: its own scripts, inline styles (Swagger UI sets them), data: images. */
const docsPolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

/** `/openapi.json` and `/docs` (Swagger UI from the swagger-ui-dist package; the machine needs no internet). */
export function apiDocsRoutes(document: object): Router {
  const router = Router();
  const json = JSON.stringify(document);

  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('application/json').send(json);
  });
  router.get('/docs', docsPolicy, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(PAGE);
  });
  router.get('/docs/assets/docs-init.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(INITIALIZER);
  });
  const assets = express.static(SWAGGER_UI_DIR, { index: false, maxAge: '1h' });
  router.use('/docs/assets', (req, res, next) => (ASSETS.has(req.path) ? assets(req, res, next) : next()));
  return router;
}
