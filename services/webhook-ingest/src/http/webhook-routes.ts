import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { Problem } from '@payments/contracts';
import {
  AppError,
  contextFromCarrier,
  inSpan,
  isTracing,
  linksToActiveSpan,
  verifyWebhookSignature,
  type Logger,
  type SignatureFailure,
} from '@payments/service-kit';
import type { WebhookSettings } from '../config.js';
import { parsePaymentStatusWebhook, parsePaymentWebhook } from '../domain/payment-webhooks.js';
import { parseProviderEvent, traceCarrierOf } from '../domain/provider-events.js';
import type { IncomingWebhookEvent, WebhookSource } from '../domain/webhook-event.js';
import type { WebhookIntake } from '../events/webhook-intake.js';
import type { WebhookMetrics } from '../webhook-metrics.js';

export interface WebhookRoutesDeps {
  /** The service's logger: the handled event is logged only when it would log at info. */
  logger: Logger;
  intake: WebhookIntake;
  metrics: WebhookMetrics;
  settings: WebhookSettings;
}

interface WebhookEndpoint {
  path: string;
  source: WebhookSource;
  /** The header carrying the signature; null for the unsigned endpoint. */
  signatureHeader: string | null;
  /** Another name the same signature may come under (Stripe's own, from `stripe listen` or a Stripe endpoint). */
  signatureHeaderAlias?: string;
  /** A stand-in's confirmation (SPEC's generic endpoints), not the provider's own event. */
  standIn: boolean;
  invalidMessage: string;
  parse(body: unknown): IncomingWebhookEvent | null;
}

const WEBHOOK_BODY_LIMIT_BYTES = 64 * 1024;

const ENDPOINTS: readonly WebhookEndpoint[] = [
  {
    path: '/webhook/payment',
    source: 'payment',
    signatureHeader: null,
    standIn: true,
    invalidMessage: 'invalid payload',
    parse: parsePaymentWebhook,
  },
  {
    path: '/webhook/payment-status',
    source: 'payment-status',
    signatureHeader: 'X-Webhook-Signature',
    standIn: true,
    invalidMessage: 'invalid payload',
    parse: parsePaymentStatusWebhook,
  },
  {
    path: '/webhook/provider',
    source: 'provider',
    signatureHeader: 'Provider-Signature',
    signatureHeaderAlias: 'Stripe-Signature',
    standIn: false,
    invalidMessage: 'invalid provider event',
    parse: parseProviderEvent,
  },
];

const SIGNATURE_PROBLEMS: Record<SignatureFailure, string> = {
  missing: 'is missing',
  malformed: 'is malformed',
  'no-signature': 'has no v1 signature',
  stale: 'has a timestamp outside the tolerance',
  mismatch: 'does not match',
};

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Verifies, parses and ingests one call; a call it refuses gets an AppError (4xx). */
function handleWebhook(
  endpoint: WebhookEndpoint,
  { logger, intake, metrics, settings }: WebhookRoutesDeps,
): RequestHandler {
  return async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (endpoint.signatureHeader) {
      const signature =
        req.get(endpoint.signatureHeader) ??
        (endpoint.signatureHeaderAlias && req.get(endpoint.signatureHeaderAlias));
      const verification = verifyWebhookSignature(
        raw,
        signature,
        settings.secrets,
        settings.toleranceSeconds,
      );
      if (!verification.ok) {
        metrics.rejected(endpoint.source, `signature-${verification.reason}`);
        throw new AppError(
          'VALIDATION_ERROR',
          `invalid signature: the ${endpoint.signatureHeader} header ${SIGNATURE_PROBLEMS[verification.reason]}`,
        );
      }
    }
    const event = endpoint.parse(parseJson(raw));
    if (!event) {
      metrics.rejected(endpoint.source, 'invalid-payload');
      throw new AppError('VALIDATION_ERROR', endpoint.invalidMessage);
    }
    // The request id becomes the event's correlation id, tying this call to the ledger change in the logs.
    const correlationId = req.get('x-request-id') as string;
    const carrier = isTracing() ? traceCarrierOf(event.payload) : null;
    // A provider's event continues the trace its payment was asked in, linked to this request's own span.
    const result = carrier
      ? await inSpan(
          `webhook ${event.type}`,
          { parent: contextFromCarrier(carrier), links: linksToActiveSpan() },
          () => intake.ingest(event, correlationId),
        )
      : await intake.ingest(event, correlationId);
    if (logger.isLevelEnabled('info')) {
      req.log.info(
        {
          correlation_id: correlationId,
          event_id: event.eventId,
          source: event.source,
          event_type: event.type,
          result,
        },
        'webhook event handled',
      );
    }
    res.status(200).end();
  };
}

/** Signatures are checked on the raw bytes, so these routes read the body themselves. */
export function mountWebhookRoutes(app: Express, deps: WebhookRoutesDeps): void {
  const rawBody = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES });
  for (const endpoint of ENDPOINTS) {
    // Disabled, the unsigned endpoint does not exist: it would confirm payments on anyone's word.
    if (endpoint.signatureHeader === null && !deps.settings.unsignedEnabled) continue;
    // Nor do a stand-in's where the provider confirms: its signing secret would otherwise sign them too.
    if (endpoint.standIn && !deps.settings.standInConfirmations) continue;
    app.post(endpoint.path, rawBody, handleWebhook(endpoint, deps));
  }
}

/** Webhook callers get `{ error }`, never problem+json, and nothing internal. */
function webhookErrorBody(problem: Problem): { error: string } {
  return {
    error: problem.status >= 500 ? 'internal error' : problem.status === 404 ? 'not found' : problem.detail,
  };
}

/**
 * As SPEC.md says of webhooks: a database or bus failure is a 500, even where the API answers a database that is
 * away 503 (ADR 0115); a provider retries either.
 */
export function renderWebhookError(problem: Problem, _req: Request, res: Response): void {
  res.status(problem.status >= 500 ? 500 : problem.status).json(webhookErrorBody(problem));
}
