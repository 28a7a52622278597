import { Router } from 'express';
import { consoleDist } from '@payments/console';
import { PAYMENT_PAGE_SETTINGS_META } from '@payments/contracts/payment-page';
import {
  paymentPageClientSettings,
  paymentPageContentSecurityPolicy,
  type PaymentPageSettings,
} from '../domain/payment-page.js';
import { builtPage } from './console.js';

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The built pay.html with the provider's public settings as JSON in a `<meta>`: data, never inline script. */
export function withPageSettings(html: string, settings: PaymentPageSettings): string {
  const json = JSON.stringify(paymentPageClientSettings(settings));
  const meta = `<meta name="${PAYMENT_PAGE_SETTINGS_META}" content="${escapeAttribute(json)}" />`;
  return html.replace('</head>', `    ${meta}\n  </head>`);
}

/**
 * `GET /pay/{transaction_id}` (ADR 0128): the console build's pay.html, under the payment page's own policy, for any
 * id (the page reads the deposit through the API, which alone decides who sees it). Its scripts and styles are the
 * console's hashed files under /console/assets/. With no provider (`none`) there is no page: the kit's 404.
 */
export function paymentPageRoutes(settings: PaymentPageSettings, directory: string = consoleDist): Router {
  const router = Router();
  if (settings.provider === 'none') return router;
  const policy = paymentPageContentSecurityPolicy(settings);
  const page = builtPage('pay.html', directory, (html) => withPageSettings(html, settings));
  router.get('/pay/:transactionId', (_req, res, next) => {
    // Replaces the edge's default policy (helmet) with the page's.
    res.set('Content-Security-Policy', policy);
    page(_req, res, next);
  });
  return router;
}
