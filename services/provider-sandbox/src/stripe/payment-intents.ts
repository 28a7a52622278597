import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import {
  resourceMissing as missing,
  StripeApiError,
  stripeEvent,
  stripeId as id,
  unixNow as now,
} from './objects.js';
import type { CheckedCard } from '../domain/test-cards.js';
import { listPage, type ListQuery } from './lists.js';
import type { PlatformBalance } from './platform-balance.js';

/**
 * PaymentIntents as Stripe's test mode runs them, kept in the sandbox's memory: created, confirmed with one of
 * Stripe's documented test payment methods, canceled. Every change yields the events Stripe would send, in its order.
 * The objects are the `stripe` library's own types, so a shape that drifts from Stripe's does not compile.
 */

type PaymentIntent = Stripe.PaymentIntent;
export type PaymentIntentEvent =
  | Stripe.PaymentIntentCreatedEvent
  | Stripe.PaymentIntentSucceededEvent
  | Stripe.PaymentIntentPaymentFailedEvent
  | Stripe.PaymentIntentCanceledEvent
  | Stripe.RefundCreatedEvent
  | Stripe.RefundUpdatedEvent
  | Stripe.RefundFailedEvent
  | Stripe.ChargeRefundedEvent
  | Stripe.ChargeRefundUpdatedEvent
  | Stripe.ChargeDisputeCreatedEvent
  | Stripe.ChargeDisputeClosedEvent;

/** The fields of a dispute the sandbox keeps and sends (Stripe's type, narrowed to them). */
export type SandboxDispute = Pick<
  Stripe.Dispute,
  | 'id'
  | 'object'
  | 'amount'
  | 'charge'
  | 'currency'
  | 'created'
  | 'is_charge_refundable'
  | 'livemode'
  | 'metadata'
  | 'payment_intent'
  | 'reason'
  | 'status'
>;

/** The fields of a charge the sandbox keeps and sends (Stripe's type, narrowed to them). */
type RefundedCharge = Pick<
  Stripe.Charge,
  'id' | 'object' | 'amount' | 'amount_captured' | 'amount_refunded' | 'currency' | 'created' | 'livemode'
> &
  Pick<Stripe.Charge, 'metadata' | 'paid' | 'payment_intent' | 'refunded' | 'status'> & {
    refunds: Stripe.ApiList<Stripe.Refund>;
  };

/** How a confirmation with a payment method ends. */
interface TestBehaviour {
  decline?: { code: string; decline_code?: string; message: string; param?: string };
  disputed?: true;
  /** How a refund of the payment ends (Stripe's refund test cards); unset, it succeeds at once. */
  refund?: 'pending' | 'fails';
}

/** A card payment method made from details a payer typed: Stripe's object, narrowed to what the sandbox keeps. */
export type SandboxPaymentMethod = Pick<
  Stripe.PaymentMethod,
  'id' | 'object' | 'type' | 'created' | 'livemode' | 'customer' | 'metadata'
> & {
  card: Pick<Stripe.PaymentMethod.Card, 'brand' | 'last4' | 'exp_month' | 'exp_year' | 'funding'>;
};

/** A real card's number in test mode: Stripe declines it without trying it. */
const LIVE_CARD_IN_TEST_MODE: TestBehaviour = {
  decline: {
    code: 'card_declined',
    decline_code: 'test_mode_live_card',
    message:
      'Your card was declined. Your request was in test mode, but used a non test card. For a list of valid test ' +
      'cards, visit: https://stripe.com/docs/testing.',
  },
};

/** Stripe's test payment methods (docs.stripe.com/testing): how a confirmation with each ends. */
const TEST_PAYMENT_METHODS: Record<string, TestBehaviour> = {
  pm_card_visa: {},
  // Succeeds; a refund of it is pending, and succeeds later (Stripe's pm_card_pendingRefund, 4000000000007726).
  pm_card_pendingRefund: { refund: 'pending' },
  // Succeeds; a refund of it fails later (Stripe's pm_card_refundFail, 4000000000005126). Stripe shows that refund
  // succeeded until it fails; the sandbox keeps it pending until then (ADR 0119).
  pm_card_refundFail: { refund: 'fails' },
  // Succeeds, then the cardholder disputes the charge (Stripe's pm_card_createDispute).
  pm_card_createDispute: { disputed: true },
  pm_card_mastercard: {},
  pm_card_amex: {},
  pm_card_chargeDeclined: {
    decline: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    decline: {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  pm_card_chargeDeclinedExpiredCard: {
    decline: { code: 'expired_card', message: 'Your card has expired.' },
  },
  pm_card_chargeDeclinedLostCard: {
    decline: { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedIncorrectCvc: {
    decline: { code: 'incorrect_cvc', message: "Your card's security code is incorrect.", param: 'cvc' },
  },
  pm_card_chargeDeclinedProcessingError: {
    decline: {
      code: 'processing_error',
      message: 'An error occurred while processing your card. Try again in a little bit.',
    },
  },
};

/** Whether the sandbox can charge a payment method of this name (its test ones). */
export const isTestPaymentMethod = (name: string) => Object.hasOwn(TEST_PAYMENT_METHODS, name);

export const CANCELLATION_REASONS = [
  'duplicate',
  'fraudulent',
  'requested_by_customer',
  'abandoned',
] as const;

export interface NewPaymentIntent {
  amount: number;
  currency: string;
  metadata: Record<string, string>;
  paymentMethod?: string;
  description?: string;
}

/** The reasons Stripe accepts for a refund. */
export const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

export interface RequestInfo {
  idempotencyKey: string | null;
}

export interface PaymentIntentStore {
  create(params: NewPaymentIntent, request: RequestInfo): Change;
  retrieve(id: string): PaymentIntent;
  /** A card payment method from checked details (Stripe's `payment_method_data`): brand, last4 and expiry only. */
  createCardPaymentMethod(card: CheckedCard): SandboxPaymentMethod;
  retrievePaymentMethod(id: string): SandboxPaymentMethod;
  list(query: ListQuery): Stripe.ApiList<PaymentIntent>;
  confirm(id: string, paymentMethod: string | undefined, request: RequestInfo): Change;
  cancel(
    id: string,
    reason: Stripe.PaymentIntent.CancellationReason | undefined,
    request: RequestInfo,
  ): Change;
  /** Disputes, of one PaymentIntent's charge when `paymentIntent` names it. */
  listDisputes(query: ListQuery, filter: { paymentIntent?: string }): Stripe.ApiList<SandboxDispute>;
  /** Refunds, of one PaymentIntent's charge when `paymentIntent` names it. */
  listRefunds(query: ListQuery, filter: { paymentIntent?: string }): Stripe.ApiList<Stripe.Refund>;
  /**
   * Closes a dispute as Stripe test mode does: `accept` (POST /v1/disputes/:id/close) loses it; evidence
   * `winning_evidence` wins it and `losing_evidence` loses it. The money returns to the platform if it is won.
   */
  closeDispute(
    disputeId: string,
    outcome: 'accept' | 'winning_evidence' | 'losing_evidence',
    request: RequestInfo,
  ): { dispute: SandboxDispute; events: PaymentIntentEvent[] };
  /** Refunds a payment that succeeded, in whole or in part: `refund.created`, then `charge.refunded`. */
  refund(
    id: string,
    params: { amount?: number; metadata: Record<string, string>; reason?: Stripe.Refund.Reason },
    request: RequestInfo,
  ): { refund: Stripe.Refund; events: PaymentIntentEvent[]; pending: boolean };
  retrieveRefund(id: string): Stripe.Refund;
  /**
   * Ends a pending refund as its payment's test card says: succeeded (`refund.updated`, `charge.refund.updated`),
   * or failed (`refund.updated`, `refund.failed`, `charge.refund.updated`; the money is back on the platform's
   * balance and off the charge's refunded total). No events for a refund that is not pending.
   */
  settleRefund(id: string): PaymentIntentEvent[];
}

/** The object as it is after a request, the events it caused, and the error the request is answered with, if any. */
export interface Change {
  paymentIntent: PaymentIntent;
  events: PaymentIntentEvent[];
  error?: StripeApiError;
}

export function createPaymentIntentStore(platform: PlatformBalance): PaymentIntentStore {
  const intents = new Map<string, PaymentIntent>();
  /** By PaymentIntent: the refunds of its charge, newest first. */
  const refunds = new Map<string, Stripe.Refund[]>();
  const disputes = new Map<string, SandboxDispute>();
  /** Each refund's PaymentIntent. */
  const refundIntents = new Map<string, string>();
  /** Card payment methods made from a payer's details, and how each behaves when charged. */
  const cards = new Map<string, { method: SandboxPaymentMethod; behaviour: TestBehaviour }>();

  const behaviourOf = (paymentMethod: string): TestBehaviour | undefined =>
    Object.hasOwn(TEST_PAYMENT_METHODS, paymentMethod)
      ? TEST_PAYMENT_METHODS[paymentMethod]
      : cards.get(paymentMethod)?.behaviour;

  const findRefund = (refundId: string) => {
    const intentId = refundIntents.get(refundId);
    const intent = intentId ? intents.get(intentId) : undefined;
    const refund = intentId ? refunds.get(intentId)?.find((r) => r.id === refundId) : undefined;
    return intent && refund ? { intent, refund } : null;
  };

  /** What a charge counts as refunded, as Stripe's amount_refunded does: its refunds but the failed or canceled. */
  const refundedOf = (all: readonly Stripe.Refund[]) =>
    all.filter((r) => r.status !== 'failed' && r.status !== 'canceled').reduce((sum, r) => sum + r.amount, 0);

  /** The charge of a paid PaymentIntent, with its refunds, as charge.refunded sends it. */
  const chargeOf = (intent: PaymentIntent): RefundedCharge => {
    const charge = intent.latest_charge as string;
    const all = refunds.get(intent.id) ?? [];
    const refunded = refundedOf(all);
    return {
      id: charge,
      object: 'charge',
      amount: intent.amount,
      amount_captured: intent.amount_received,
      amount_refunded: refunded,
      currency: intent.currency,
      created: intent.created,
      livemode: false,
      metadata: intent.metadata,
      paid: true,
      payment_intent: intent.id,
      refunded: refunded === intent.amount_received,
      status: 'succeeded',
      refunds: {
        object: 'list',
        data: structuredClone(all),
        has_more: false,
        url: `/v1/charges/${charge}/refunds`,
      },
    };
  };

  const event = (
    type: PaymentIntentEvent['type'],
    object: PaymentIntent | RefundedCharge | Stripe.Refund | SandboxDispute,
    request: RequestInfo,
  ): PaymentIntentEvent =>
    stripeEvent<PaymentIntentEvent>(type, object, { idempotencyKey: request.idempotencyKey });

  const find = (paymentIntentId: string) => {
    const found = intents.get(paymentIntentId);
    if (!found) throw missing(404, 'intent', `No such payment_intent: '${paymentIntentId}'`);
    return found;
  };

  const unexpectedState = (intent: PaymentIntent, action: string) =>
    new StripeApiError(400, {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}.`,
      payment_intent: structuredClone(intent),
    });

  const confirmWith = (intent: PaymentIntent, paymentMethod: string, request: RequestInfo): Change => {
    const method = behaviourOf(paymentMethod);
    if (!method) throw missing(400, 'payment_method', `No such PaymentMethod: '${paymentMethod}'`);
    intent.payment_method = paymentMethod;
    if (method.decline) {
      Object.assign(intent, {
        status: 'requires_payment_method',
        last_payment_error: {
          type: 'card_error',
          code: method.decline.code,
          decline_code: method.decline.decline_code,
          message: method.decline.message,
          payment_method: cards.get(paymentMethod)?.method ?? { id: paymentMethod, object: 'payment_method' },
        } as unknown as Stripe.PaymentIntent.LastPaymentError,
        latest_charge: id('ch'),
      });
      const failed = event('payment_intent.payment_failed', intent, request);
      // Stripe leaves the failed method off the intent, so the customer can try another.
      intent.payment_method = null;
      return {
        paymentIntent: structuredClone(intent),
        events: [failed],
        error: new StripeApiError(402, {
          type: 'card_error',
          code: method.decline.code,
          decline_code: method.decline.decline_code,
          message: method.decline.message,
          param: method.decline.param ?? '',
          payment_intent: structuredClone(intent),
        }),
      };
    }
    platform.add(intent.currency, intent.amount);
    Object.assign(intent, {
      status: 'succeeded',
      amount_received: intent.amount,
      last_payment_error: null,
      latest_charge: id('ch'),
    });
    const events = [event('payment_intent.succeeded', intent, request)];
    if (method.disputed) {
      // The cardholder's bank takes the money back at once, until the dispute is decided.
      const dispute: SandboxDispute = {
        id: id('dp'),
        object: 'dispute',
        amount: intent.amount,
        charge: intent.latest_charge as string,
        currency: intent.currency,
        created: now(),
        is_charge_refundable: false,
        livemode: false,
        metadata: {},
        payment_intent: intent.id,
        reason: 'fraudulent',
        status: 'needs_response',
      };
      disputes.set(dispute.id, dispute);
      platform.add(intent.currency, -intent.amount);
      events.push(event('charge.dispute.created', dispute, request));
    }
    return { paymentIntent: structuredClone(intent), events };
  };

  return {
    create(params, request) {
      // As at Stripe, a method it does not know makes no PaymentIntent.
      if (params.paymentMethod !== undefined && !behaviourOf(params.paymentMethod))
        throw missing(400, 'payment_method', `No such PaymentMethod: '${params.paymentMethod}'`);
      const intentId = id('pi');
      const intent: PaymentIntent = {
        id: intentId,
        object: 'payment_intent',
        allowed_payment_method_types: null,
        amount: params.amount,
        amount_capturable: 0,
        amount_received: 0,
        application: null,
        application_fee_amount: null,
        automatic_payment_methods: null,
        canceled_at: null,
        cancellation_reason: null,
        capture_method: 'automatic',
        client_secret: `${intentId}_secret_${randomBytes(18).toString('base64url')}`,
        confirmation_method: 'automatic',
        created: now(),
        currency: params.currency,
        customer: null,
        customer_account: null,
        description: params.description ?? null,
        excluded_payment_method_types: null,
        last_payment_error: null,
        latest_charge: null,
        livemode: false,
        managed_payments: null,
        metadata: params.metadata,
        next_action: null,
        on_behalf_of: null,
        payment_method: params.paymentMethod ?? null,
        payment_method_configuration_details: null,
        payment_method_options: null,
        payment_method_types: ['card'],
        payment_record: null,
        processing: null,
        receipt_email: null,
        review: null,
        setup_future_usage: null,
        shipping: null,
        source: null,
        statement_descriptor: null,
        statement_descriptor_suffix: null,
        status: params.paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
        transfer_data: null,
        transfer_group: null,
      };
      intents.set(intentId, intent);
      return {
        paymentIntent: structuredClone(intent),
        events: [event('payment_intent.created', intent, request)],
      };
    },

    retrieve(paymentIntentId) {
      return structuredClone(find(paymentIntentId));
    },

    createCardPaymentMethod(card) {
      const method: SandboxPaymentMethod = {
        id: id('pm'),
        object: 'payment_method',
        type: 'card',
        created: now(),
        livemode: false,
        customer: null,
        metadata: {},
        card: {
          brand: card.brand,
          last4: card.last4,
          exp_month: card.expMonth,
          exp_year: card.expYear,
          funding: card.funding,
        },
      };
      const behaviour = (card.testMethod && TEST_PAYMENT_METHODS[card.testMethod]) || LIVE_CARD_IN_TEST_MODE;
      cards.set(method.id, { method, behaviour });
      return structuredClone(method);
    },

    retrievePaymentMethod(paymentMethodId) {
      const found = cards.get(paymentMethodId);
      if (!found) throw missing(404, 'payment_method', `No such PaymentMethod: '${paymentMethodId}'`);
      return structuredClone(found.method);
    },

    list: (query) =>
      listPage(intents.values(), query, {
        url: '/v1/payment_intents',
        name: 'payment_intent',
        view: structuredClone,
      }),

    confirm(paymentIntentId, paymentMethod, request) {
      const intent = find(paymentIntentId);
      if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation') {
        throw unexpectedState(intent, 'confirm');
      }
      const method =
        paymentMethod ?? (typeof intent.payment_method === 'string' ? intent.payment_method : null);
      if (!method) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: 'payment_intent_unexpected_state',
          message:
            "You cannot confirm this PaymentIntent because it's missing a payment method. Update it with a " +
            'payment method, or confirm it with `payment_method`.',
          payment_intent: structuredClone(intent),
        });
      }
      return confirmWith(intent, method, request);
    },

    listDisputes: (query, { paymentIntent }) =>
      listPage(disputes.values(), query, {
        url: '/v1/disputes',
        name: 'dispute',
        matches: (dispute) => !paymentIntent || dispute.payment_intent === paymentIntent,
        view: structuredClone,
      }),

    listRefunds: (query, { paymentIntent }) =>
      listPage([...refunds.values()].flat(), query, {
        url: '/v1/refunds',
        name: 'refund',
        matches: (refund) => !paymentIntent || refund.payment_intent === paymentIntent,
        view: structuredClone,
      }),

    closeDispute(disputeId, outcome, request) {
      const dispute = disputes.get(disputeId);
      if (!dispute) throw missing(404, 'dispute', `No such dispute: '${disputeId}'`);
      if (dispute.status !== 'needs_response') {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          message: `This dispute is already closed (${dispute.status}).`,
        });
      }
      dispute.status = outcome === 'winning_evidence' ? 'won' : 'lost';
      if (dispute.status === 'won') platform.add(dispute.currency, dispute.amount);
      return {
        dispute: structuredClone(dispute),
        events: [event('charge.dispute.closed', dispute, request)],
      };
    },

    refund(paymentIntentId, { amount, metadata, reason }, request) {
      const intent = find(paymentIntentId);
      const charge = typeof intent.latest_charge === 'string' ? intent.latest_charge : null;
      if (intent.status !== 'succeeded' || !charge) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: 'charge_not_refundable',
          message: `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
        });
      }
      const earlier = refunds.get(intent.id) ?? [];
      const refunded = refundedOf(earlier);
      const left = intent.amount_received - refunded;
      const refunding = amount ?? left;
      if (left === 0 || refunding < 1 || refunding > left) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: left === 0 ? 'charge_already_refunded' : 'amount_too_large',
          param: 'amount',
          message:
            left === 0
              ? `Charge ${charge} has already been refunded.`
              : `Refund amount (${refunding}) is greater than the unrefunded amount on the charge (${left}).`,
        });
      }
      const method = typeof intent.payment_method === 'string' ? intent.payment_method : null;
      const pending = method !== null && behaviourOf(method)?.refund !== undefined;
      const refund: Stripe.Refund = {
        id: id('re'),
        object: 'refund',
        amount: refunding,
        balance_transaction: id('txn'),
        charge,
        created: now(),
        currency: intent.currency,
        customer: null,
        customer_account: null,
        metadata,
        payment_intent: intent.id,
        payment_method: method,
        reason: reason ?? null,
        receipt_number: null,
        source_transfer_reversal: null,
        status: pending ? 'pending' : 'succeeded',
        ...(pending && { pending_reason: 'processing' as const }),
        transfer_reversal: null,
      };
      platform.add(intent.currency, -refunding);
      refunds.set(intent.id, [refund, ...earlier]);
      refundIntents.set(refund.id, intent.id);
      return {
        refund: structuredClone(refund),
        events: [
          event('refund.created', refund, request),
          event('charge.refunded', chargeOf(intent), request),
        ],
        pending,
      };
    },

    retrieveRefund(refundId) {
      const found = findRefund(refundId);
      if (!found) throw missing(404, 'refund', `No such refund: '${refundId}'`);
      return structuredClone(found.refund);
    },

    settleRefund(refundId) {
      const found = findRefund(refundId);
      if (!found || found.refund.status !== 'pending') return [];
      const { refund, intent } = found;
      const method = typeof intent.payment_method === 'string' ? intent.payment_method : '';
      const fails = behaviourOf(method)?.refund === 'fails';
      delete refund.pending_reason;
      const automatic = { idempotencyKey: null };
      if (!fails) {
        refund.status = 'succeeded';
        return [
          event('refund.updated', refund, automatic),
          event('charge.refund.updated', refund, automatic),
        ];
      }
      Object.assign(refund, {
        status: 'failed',
        failure_reason: 'expired_or_canceled_card',
        failure_balance_transaction: id('txn'),
      });
      platform.add(intent.currency, refund.amount);
      return [
        event('refund.updated', refund, automatic),
        event('refund.failed', refund, automatic),
        event('charge.refund.updated', refund, automatic),
      ];
    },

    cancel(paymentIntentId, reason, request) {
      const intent = find(paymentIntentId);
      if (intent.status === 'succeeded' || intent.status === 'canceled')
        throw unexpectedState(intent, 'cancel');
      Object.assign(intent, { status: 'canceled', canceled_at: now(), cancellation_reason: reason ?? null });
      return {
        paymentIntent: structuredClone(intent),
        events: [event('payment_intent.canceled', intent, request)],
      };
    },
  };
}
