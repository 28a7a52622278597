import { createHash, timingSafeEqual } from 'node:crypto';
import cors from 'cors';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type Stripe from 'stripe';
import type { Logger } from '@payments/service-kit';
import { checkCard } from '../domain/test-cards.js';
import { failsBySandboxRule } from '../domain/test-amounts.js';
import type { ProviderWebhookClient } from '../events/provider-webhook-client.js';
import { createForgottenEvents, type EventForgetting } from '../faults/forgotten-events.js';
import { createHeldPayouts, outcomeOf } from '../faults/held-payouts.js';
import { verificationOf } from '../stripe/account-requirements.js';
import { DEFAULT_BANK_ACCOUNT, type ConnectEvent, type ConnectStore } from '../stripe/connect.js';
import type { PlatformBalance } from '../stripe/platform-balance.js';
import { readListQuery } from '../stripe/lists.js';
import { StripeApiError } from '../stripe/objects.js';
import {
  CANCELLATION_REASONS,
  REFUND_REASONS,
  type Change,
  type PaymentIntentStore,
  type RequestInfo,
} from '../stripe/payment-intents.js';

/**
 * The part of Stripe's API the payment adapter uses, served the way Stripe serves it: form-encoded requests under
 * `/v1`, a secret key as the bearer token, Stripe's error bodies, `Idempotency-Key` replaying the first answer
 * (or refusing a key reused with other parameters), and lists paged as Stripe pages them (stripe/lists.ts). Every
 * change is sent on to webhook-ingest as a signed event, one at a time in the order they happened, unless the
 * sandbox was told to forget some (GET /sandbox/forgotten-events names those) or to lose their order.
 */
export interface StripeApiOptions {
  apiKey: string;
  /** The publishable key a payer's client confirms a PaymentIntent with, together with its client secret. */
  publishableKey: string;
  store: PaymentIntentStore;
  client: ProviderWebhookClient;
  logger: Logger;
  connect: ConnectStore;
  /** The platform's balance, served at GET /v1/balance. */
  platform: PlatformBalance;
  /** Every event is sent twice, to exercise deduplication downstream. */
  duplicateDelivery?: boolean;
  /** Above 0, each event is held up to this many milliseconds at random and sent alongside the others: out of order. */
  reorderWithinMs?: number;
  /** Some events are never sent, for reconciliation to find what they were about. */
  forgetEvents?: EventForgetting;
  /** How long after its creation the bank answers a payout (paid, or failed). */
  payoutDelayMs: number;
  /** Every payout stays pending until POST /sandbox/payouts/{id}/release answers it (see held-payouts). */
  holdPayouts?: boolean;
  /**
   * Pays every PaymentIntent no client confirmed (or tried to) within `delayMs` of its creation, as a customer would: with
   * pm_card_visa, or (an amount whose minor units end in 13) with a declined card, and `delayMs` after that
   * decline the customer gives up and it is canceled. Absent, each waits for a client to confirm it.
   */
  autoPay?: { delayMs: number };
}

interface Remembered {
  fingerprint: string;
  status: number;
  body: unknown;
}

const sameKey = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** A request's query string as sent, whatever query parser the app has (`created[gte]` stays one name). */
const queryOf = (req: Request) => new URL(req.originalUrl, 'http://sandbox.invalid').searchParams;

const PAYOUT_STATUSES = ['paid', 'pending', 'in_transit', 'canceled', 'failed'];

/** A form parameter as a string, if it was given as one. */
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function invalid(param: string, message: string, code = 'parameter_invalid'): StripeApiError {
  return new StripeApiError(400, { type: 'invalid_request_error', code, param, message });
}

function amountOf(body: Record<string, unknown>): number {
  const raw = text(body.amount);
  if (raw === undefined) throw invalid('amount', 'Missing required param: amount.', 'parameter_missing');
  if (!/^\d{1,12}$/.test(raw) || Number(raw) < 1)
    throw invalid('amount', 'Invalid positive integer', 'parameter_invalid_integer');
  return Number(raw);
}

function currencyOf(body: Record<string, unknown>): string {
  const raw = text(body.currency);
  if (raw === undefined) throw invalid('currency', 'Missing required param: currency.', 'parameter_missing');
  if (!/^[a-zA-Z]{3}$/.test(raw)) throw invalid('currency', `Invalid currency: ${raw}`);
  return raw.toLowerCase();
}

function metadataOf(body: Record<string, unknown>): Record<string, string> {
  const raw = body.metadata;
  if (raw === undefined || raw === '') return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid('metadata', 'Invalid hash');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 50 || entries.some(([key, value]) => typeof value !== 'string' || key.length > 40))
    throw invalid(
      'metadata',
      'Invalid metadata: at most 50 keys of up to 40 characters, each with a string value',
    );
  return Object.fromEntries(entries) as Record<string, string>;
}

/** `individual[id_number]`, the test value that drives a connected account's verification. */
function idNumberOf(body: Record<string, unknown>): string | undefined {
  const individual = body.individual;
  if (individual === undefined || typeof individual !== 'object' || individual === null) return undefined;
  return text((individual as Record<string, unknown>).id_number);
}

function cancellationReasonOf(
  body: Record<string, unknown>,
): Stripe.PaymentIntent.CancellationReason | undefined {
  const raw = text(body.cancellation_reason);
  if (raw === undefined) return undefined;
  if (!(CANCELLATION_REASONS as readonly string[]).includes(raw))
    throw invalid(
      'cancellation_reason',
      `Invalid cancellation_reason: must be one of ${CANCELLATION_REASONS.join(', ')}`,
    );
  return raw as Stripe.PaymentIntent.CancellationReason;
}

function refundReasonOf(body: Record<string, unknown>): Stripe.Refund.Reason | undefined {
  const raw = text(body.reason);
  if (raw === undefined) return undefined;
  if (!(REFUND_REASONS as readonly string[]).includes(raw))
    throw invalid('reason', `Invalid reason: must be one of ${REFUND_REASONS.join(', ')}`);
  return raw as Stripe.Refund.Reason;
}

/**
 * What a payer's browser may send to the one route it calls (as Stripe.js does): any origin, no cookies, the
 * publishable key in Authorization and a form body. Every other route answers without CORS headers, so a page can
 * never use a secret key from a browser.
 */
const allowBrowsers = cors({
  origin: '*',
  methods: ['POST'],
  allowedHeaders: ['Authorization', 'Content-Type'],
  maxAge: 600,
});

/** Card details (`payment_method_data`) as a confirmation sends them, as the card's payment method, or Stripe's error. */
function paymentMethodOf(body: Record<string, unknown>, store: PaymentIntentStore): string | undefined {
  const data = body.payment_method_data;
  if (data === undefined) return text(body.payment_method);
  if (body.payment_method !== undefined) {
    throw invalid(
      'payment_method_data',
      'You cannot specify both `payment_method` and `payment_method_data`.',
      'parameter_unknown',
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw invalid('payment_method_data', 'Invalid hash');
  const { type, card } = data as Record<string, unknown>;
  if (type === undefined)
    throw invalid(
      'payment_method_data[type]',
      'Missing required param: payment_method_data[type].',
      'parameter_missing',
    );
  if (type !== 'card')
    throw invalid('payment_method_data[type]', 'The sandbox takes card payment methods only: `card`.');
  if (typeof card !== 'object' || card === null || Array.isArray(card))
    throw invalid(
      'payment_method_data[card]',
      'Missing required param: payment_method_data[card].',
      'parameter_missing',
    );
  const fields = card as Record<string, unknown>;
  for (const field of ['number', 'exp_month', 'exp_year']) {
    if (text(fields[field]) === undefined) {
      const param = `payment_method_data[card][${field}]`;
      throw invalid(param, `Missing required param: ${param}.`, 'parameter_missing');
    }
  }
  const checked = checkCard({
    number: text(fields.number),
    expMonth: text(fields.exp_month),
    expYear: text(fields.exp_year),
    cvc: text(fields.cvc),
  });
  // Details Stripe refuses make no payment method and leave the PaymentIntent as it was: no charge was tried.
  if ('rejected' in checked) {
    const { code, message, param } = checked.rejected;
    throw new StripeApiError(402, {
      type: 'card_error',
      code,
      message,
      param: `payment_method_data[card][${param}]`,
    });
  }
  return store.createCardPaymentMethod(checked.card).id;
}

export function mountStripeApi(app: Express, options: StripeApiOptions): { stop(): void } {
  const { apiKey, publishableKey, store, client, logger, autoPay, connect } = options;
  const timers = new Set<NodeJS.Timeout>();
  const remembered = new Map<string, Remembered>();
  let sending: Promise<void> = Promise.resolve();
  const forgotten = createForgottenEvents(options.forgetEvents, logger);
  const held = createHeldPayouts();

  const copies = options.duplicateDelivery ? 2 : 1;
  /** Sends one copy of an event; one the client gave up on (after about a minute of retries) is logged. */
  const deliver = async (event: Change['events'][number] | ConnectEvent) => {
    try {
      await client.send(event, event.request?.id ?? event.id);
    } catch (error) {
      logger.error(
        { err: error, provider_event_id: event.id, type: event.type },
        'a Stripe event was not delivered',
      );
    }
  };

  /**
   * Sends events after those of earlier requests, never two at once, so webhook-ingest sees Stripe's order; with
   * `reorderWithinMs`, each copy goes alone after a random delay of its own, and the order is lost (Stripe does not
   * promise it either). Whether an event is forgotten is decided here, as it happens, so GET /sandbox/forgotten-events
   * names it at once.
   */
  const sendInOrder = (events: readonly (Change['events'][number] | ConnectEvent)[]) => {
    const sent = events.filter((event) => !forgotten.forgets(event));
    const { reorderWithinMs = 0 } = options;
    if (reorderWithinMs > 0) {
      for (const event of sent) {
        for (let copy = 0; copy < copies; copy += 1) {
          later(Math.random() * reorderWithinMs, () => void deliver(event));
        }
      }
      return;
    }
    sending = sending.then(async () => {
      for (const event of sent) {
        for (let copy = 0; copy < copies; copy += 1) await deliver(event);
      }
    });
  };

  const later = (delayMs: number, step: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      step();
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };

  /** One step of the customer the sandbox plays; a step the intent's state no longer allows is not taken. */
  const customer = (step: () => Change) => () => {
    try {
      sendInOrder(step().events);
    } catch (error) {
      if (!(error instanceof StripeApiError)) logger.error({ err: error }, 'the sandbox customer failed');
    }
  };

  /** A pending verification ends, verified, SANDBOX_DELAY_MS later (unless it was moved on meanwhile). */
  const verifyLater = (accountId: string) =>
    later(options.payoutDelayMs, () => {
      if (
        connect.retrieveAccount(accountId).requirements?.disabled_reason !==
        'requirements.pending_verification'
      )
        return;
      sendInOrder(connect.updateAccount(accountId, { verification: 'verified' }).events);
    });

  /** PaymentIntents the sandbox will pay unless a client confirms (or tries to) first: then their payer is there. */
  const awaitingCustomer = new Set<string>();

  const payLater = (paymentIntentId: string, amount: number) => {
    if (!autoPay) return;
    const automatic = { idempotencyKey: null };
    awaitingCustomer.add(paymentIntentId);
    later(autoPay.delayMs, () => {
      if (!awaitingCustomer.delete(paymentIntentId)) return;
      customer(() => {
        const paid = store.confirm(
          paymentIntentId,
          failsBySandboxRule(amount) ? 'pm_card_chargeDeclined' : 'pm_card_visa',
          automatic,
        );
        if (paid.error) {
          later(
            autoPay.delayMs,
            customer(() => store.cancel(paymentIntentId, 'abandoned', automatic)),
          );
        }
        return paid;
      })();
    });
  };

  /**
   * The secret key opens everything. The publishable key, as in Stripe.js, only confirms a PaymentIntent whose
   * client secret comes with it (see clientConfirmation); everything else refuses it.
   */
  const authenticate = (req: Request, res: Response, next: NextFunction) => {
    const [scheme, key] = (req.get('authorization') ?? '').split(' ');
    const bearer = scheme?.toLowerCase() === 'bearer' && key ? key : null;
    if (bearer && sameKey(bearer, apiKey)) return next();
    if (bearer && sameKey(bearer, publishableKey)) {
      if (req.method === 'POST' && /^\/payment_intents\/[^/]+\/confirm$/.test(req.path)) {
        res.locals.publishable = true;
        return next();
      }
      return next(
        new StripeApiError(403, {
          type: 'invalid_request_error',
          message: 'This API call cannot be made with a publishable API key. Please use a secret API key.',
        }),
      );
    }
    const shown = key ? `${key.slice(0, 8)}…` : 'none';
    next(
      new StripeApiError(401, {
        type: 'invalid_request_error',
        message: `Invalid API Key provided: ${shown}`,
      }),
    );
  };

  /** With the publishable key, a confirmation names the PaymentIntent's client secret, or finds no such intent. */
  const clientConfirmation = (req: Request, res: Response) => {
    if (!res.locals.publishable) return;
    const id = req.params.id as string;
    const given = text((req.body as Record<string, unknown> | undefined)?.client_secret);
    const secret = store.retrieve(id).client_secret ?? '';
    if (!given || !sameKey(given, secret)) {
      throw new StripeApiError(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'intent',
        message: `No such payment_intent: '${id}'`,
      });
    }
  };

  /** Answers a POST with an Idempotency-Key as it was answered the first time, or refuses other parameters. */
  const idempotent =
    (handle: (req: Request, request: RequestInfo) => { status: number; body: unknown }) =>
    (req: Request, res: Response) => {
      const key = req.get('idempotency-key') ?? null;
      const account = req.get('stripe-account') ?? '';
      // A digest, not the body: a card number sent with a confirmation is never kept.
      const fingerprint = createHash('sha256')
        .update(`${req.method} ${req.path} ${account} ${JSON.stringify(req.body ?? {})}`)
        .digest('base64url');
      // Keys are the caller's own, as at Stripe: a payer's client (the publishable key) never meets the platform's.
      const scoped = key && `${res.locals.publishable ? 'publishable' : 'secret'}:${key}`;
      const earlier = scoped ? remembered.get(scoped) : undefined;
      if (earlier) {
        if (earlier.fingerprint !== fingerprint) {
          throw new StripeApiError(400, {
            type: 'idempotency_error',
            message:
              'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
              `Try using a key other than '${key}' if you meant to execute a different request.`,
          });
        }
        res.status(earlier.status).set('idempotent-replayed', 'true').json(earlier.body);
        return;
      }
      let answer: { status: number; body: unknown };
      try {
        answer = handle(req, { idempotencyKey: key });
      } catch (error) {
        if (!(error instanceof StripeApiError) || error.status >= 500) throw error;
        answer = { status: error.status, body: { error: error.error } };
      }
      if (scoped) remembered.set(scoped, { fingerprint, ...answer });
      res.status(answer.status).json(answer.body);
    };

  /** A change's answer: the object, or (a declined card) the error; its events go out either way. */
  const answerWith = (change: Change) => {
    sendInOrder(change.events);
    return change.error
      ? { status: change.error.status, body: { error: change.error.error } }
      : { status: 200, body: change.paymentIntent };
  };

  const v1 = express.Router();
  // Before the key is checked: a preflight carries none, and a refusal must still be readable by the page.
  v1.options('/payment_intents/:id/confirm', allowBrowsers);
  v1.post('/payment_intents/:id/confirm', allowBrowsers);
  v1.use(authenticate, express.urlencoded({ extended: true, limit: '100kb' }));

  v1.post(
    '/payment_intents',
    idempotent((req, request) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const created = store.create(
        {
          amount: amountOf(body),
          currency: currencyOf(body),
          metadata: metadataOf(body),
          paymentMethod: text(body.payment_method),
          description: text(body.description),
        },
        request,
      );
      if (text(body.confirm) !== 'true') {
        payLater(created.paymentIntent.id, created.paymentIntent.amount);
        return answerWith(created);
      }
      sendInOrder(created.events);
      return answerWith(store.confirm(created.paymentIntent.id, undefined, request));
    }),
  );

  v1.get('/payment_intents', (req, res) => {
    res.json(store.list(readListQuery(queryOf(req))));
  });

  v1.get('/payment_intents/:id', (req, res) => {
    res.json(store.retrieve(req.params.id as string));
  });

  v1.get('/payment_methods/:id', (req, res) => {
    res.json(store.retrievePaymentMethod(req.params.id as string));
  });

  v1.post('/payment_intents/:id/confirm', (req, res, next) => {
    clientConfirmation(req, res);
    awaitingCustomer.delete(req.params.id as string);
    next();
  });
  v1.post(
    '/payment_intents/:id/confirm',
    idempotent((req, request) => {
      const paymentMethod = paymentMethodOf((req.body ?? {}) as Record<string, unknown>, store);
      return answerWith(store.confirm(req.params.id as string, paymentMethod, request));
    }),
  );

  v1.post(
    '/payment_intents/:id/cancel',
    idempotent((req, request) =>
      answerWith(
        store.cancel(
          req.params.id as string,
          cancellationReasonOf((req.body ?? {}) as Record<string, unknown>),
          request,
        ),
      ),
    ),
  );

  v1.post(
    '/refunds',
    idempotent((req, request) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const paymentIntent = text(body.payment_intent);
      if (!paymentIntent) {
        throw invalid(
          'payment_intent',
          'The sandbox refunds by payment_intent: it is required.',
          'parameter_missing',
        );
      }
      const { refund, events, pending } = store.refund(
        paymentIntent,
        {
          amount: text(body.amount) === undefined ? undefined : amountOf(body),
          metadata: metadataOf(body),
          reason: refundReasonOf(body),
        },
        request,
      );
      sendInOrder(events);
      // A refund of a payment made with one of Stripe's refund test cards ends SANDBOX_DELAY_MS later.
      if (pending) later(options.payoutDelayMs, () => sendInOrder(store.settleRefund(refund.id)));
      return { status: 200, body: refund };
    }),
  );

  v1.get('/refunds/:id', (req, res) => {
    res.json(store.retrieveRefund(req.params.id as string));
  });

  v1.get('/refunds', (req, res) => {
    const query = readListQuery(queryOf(req), ['payment_intent']);
    res.json(store.listRefunds(query, { paymentIntent: query.filters.payment_intent }));
  });

  v1.get('/disputes', (req, res) => {
    const query = readListQuery(queryOf(req), ['payment_intent']);
    res.json(store.listDisputes(query, { paymentIntent: query.filters.payment_intent }));
  });

  v1.post(
    '/disputes/:id/close',
    idempotent((req, request) => {
      const { dispute, events } = store.closeDispute(req.params.id as string, 'accept', request);
      sendInOrder(events);
      return { status: 200, body: dispute };
    }),
  );

  // Stripe's test mode decides a dispute by the evidence: `winning_evidence` or `losing_evidence`.
  v1.post(
    '/disputes/:id',
    idempotent((req, request) => {
      const evidence = (req.body as { evidence?: { uncategorized_text?: unknown } } | undefined)?.evidence;
      const given = text(evidence?.uncategorized_text);
      if (given !== 'winning_evidence' && given !== 'losing_evidence') {
        throw invalid(
          'evidence[uncategorized_text]',
          'The sandbox decides a dispute by evidence[uncategorized_text]: winning_evidence or losing_evidence.',
        );
      }
      const { dispute, events } = store.closeDispute(req.params.id as string, given, request);
      sendInOrder(events);
      return { status: 200, body: dispute };
    }),
  );

  v1.post(
    '/accounts',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const type = text(body.type) ?? 'express';
      if (type !== 'express') throw invalid('type', 'The sandbox makes express accounts only.');
      const bank = body.external_account as Record<string, unknown> | undefined;
      const bankAccount = (bank && text(bank.account_number)) ?? DEFAULT_BANK_ACCOUNT;
      const verification = verificationOf(idNumberOf(body));
      const account = connect.createAccount({
        country: (text(body.country) ?? 'US').toUpperCase(),
        email: text(body.email),
        metadata: metadataOf(body),
        bankAccount,
        verification,
      });
      if (verification === 'pending') verifyLater(account.id);
      return { status: 200, body: account };
    }),
  );

  // The account's onboarding at the provider, as a test (or the user) drives it: `individual[id_number]` moves its
  // verification (stripe/account-requirements.ts); each change is an account.updated.
  v1.post(
    '/accounts/:id',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const idNumber = idNumberOf(body);
      const verification = idNumber === undefined ? undefined : verificationOf(idNumber);
      const { account, events } = connect.updateAccount(req.params.id as string, {
        verification,
        metadata: body.metadata === undefined ? undefined : metadataOf(body),
      });
      sendInOrder(events);
      if (verification === 'pending') verifyLater(account.id);
      return { status: 200, body: account };
    }),
  );

  v1.get('/balance', (_req, res) => {
    res.json(options.platform.retrieve());
  });

  v1.get('/accounts/:id', (req, res) => {
    res.json(connect.retrieveAccount(req.params.id as string));
  });

  v1.post(
    '/account_links',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const account = text(body.account);
      if (!account) throw invalid('account', 'Missing required param: account.', 'parameter_missing');
      const returnUrl = text(body.return_url);
      if (!returnUrl) throw invalid('return_url', 'Missing required param: return_url.', 'parameter_missing');
      return { status: 200, body: connect.createAccountLink(account, returnUrl) };
    }),
  );

  v1.post(
    '/transfers',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const destination = text(body.destination);
      if (!destination)
        throw invalid('destination', 'Missing required param: destination.', 'parameter_missing');
      const { transfer, events } = connect.createTransfer({
        amount: amountOf(body),
        currency: currencyOf(body),
        destination,
        metadata: metadataOf(body),
        transferGroup: text(body.transfer_group),
      });
      sendInOrder(events);
      return { status: 200, body: transfer };
    }),
  );

  v1.get('/transfers', (req, res) => {
    const query = readListQuery(queryOf(req), ['destination', 'transfer_group']);
    res.json(
      connect.listTransfers(query, {
        destination: query.filters.destination,
        transferGroup: query.filters.transfer_group,
      }),
    );
  });

  v1.get('/transfers/:id', (req, res) => {
    res.json(connect.retrieveTransfer(req.params.id as string));
  });

  v1.post(
    '/transfers/:id/reversals',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const { reversal, events } = connect.reverseTransfer(req.params.id as string, {
        amount: text(body.amount) === undefined ? undefined : amountOf(body),
        metadata: metadataOf(body),
      });
      sendInOrder(events);
      return { status: 200, body: reversal };
    }),
  );

  // A payout is made on a connected account (the Stripe-Account header), from its balance to its bank; the bank
  // answers it SANDBOX_DELAY_MS later, whatever the client does, or (SANDBOX_HOLD_PAYOUTS) once it is released.
  v1.post(
    '/payouts',
    idempotent((req) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const account = req.get('stripe-account');
      if (!account) {
        throw invalid(
          'Stripe-Account',
          'The sandbox pays out from connected accounts only: send Stripe-Account.',
        );
      }
      const { payout, events } = connect.createPayout(account, {
        amount: amountOf(body),
        currency: currencyOf(body),
        metadata: metadataOf(body),
      });
      sendInOrder(events);
      if (options.holdPayouts) held.hold(account, payout.id);
      else later(options.payoutDelayMs, () => sendInOrder(connect.settlePayout(account, payout.id)));
      return { status: 200, body: payout };
    }),
  );

  // Without Stripe-Account, the platform's own payouts: the sandbox makes none.
  v1.get('/payouts', (req, res) => {
    const query = readListQuery(queryOf(req), ['status']);
    const { status } = query.filters;
    if (status !== undefined && !PAYOUT_STATUSES.includes(status))
      throw invalid('status', `Invalid status: must be one of ${PAYOUT_STATUSES.join(', ')}`);
    res.json(connect.listPayouts(req.get('stripe-account') || undefined, query, { status }));
  });

  v1.get('/payouts/:id', (req, res) => {
    res.json(connect.retrievePayout(req.get('stripe-account') || undefined, req.params.id as string));
  });

  v1.use((req: Request) => {
    throw new StripeApiError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${req.method}: ${req.originalUrl}).`,
    });
  });

  const answerError = (error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof StripeApiError) {
      res.status(error.status).json({ error: error.error });
      return;
    }
    logger.error({ err: error }, 'the Stripe API failed');
    res.status(500).json({ error: { type: 'api_error', message: 'An error occurred with our API.' } });
  };
  v1.use(answerError);

  // The sandbox's own routes, for drills: not Stripe's, but opened by the same key.
  const sandbox = express.Router();
  sandbox.use(authenticate);
  sandbox.get('/forgotten-events', (_req, res) => {
    res.json({ data: forgotten.list() });
  });
  // A held payout's bank answers now, as told: its payout.paid or payout.failed goes out like any other event.
  sandbox.post('/payouts/:id/release', express.json({ limit: '1kb' }), (req, res) => {
    const payoutId = req.params.id as string;
    const outcome = outcomeOf(req.body);
    const account = held.release(payoutId);
    sendInOrder(connect.settlePayout(account, payoutId, outcome));
    res.json(connect.retrievePayout(account, payoutId));
  });
  sandbox.use(answerError);

  app.use('/v1', v1);
  app.use('/sandbox', sandbox);
  return {
    stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
