import { v5 as uuidv5 } from 'uuid';

export type MoneyMovement = 'deposit' | 'withdrawal';

export interface MovementRequest {
  /** The id of the DepositRequested / WithdrawalRequested event: the same request gets the same provider event. */
  requestEventId: string;
  transactionId: string;
  /** Minor units. */
  amount: number;
  currency: string;
}

/** A Stripe-style event as a provider would send it to /webhook/provider. */
export interface ProviderEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  livemode: false;
  data: { object: ProviderObject };
}

export interface ProviderObject {
  id: string;
  object: 'payment_intent' | 'payout';
  amount: number;
  currency: string;
  status: string;
  metadata: { transaction_id: string };
  [detail: string]: unknown;
}

type Outcome = 'succeeded' | 'failed';

const FAILING_SUFFIX = 13;

/** The sandbox's test rule: an amount whose minor units end in 13 (10.13 USD, 1013 JPY) fails. */
export function sandboxOutcome(amount: number): Outcome {
  return amount % 100 === FAILING_SUFFIX ? 'failed' : 'succeeded';
}

/** What the provider reports for each movement and outcome. */
const PROVIDER_EVENTS = {
  deposit: {
    idPrefix: 'pi',
    object: 'payment_intent',
    succeeded: { type: 'payment_intent.succeeded', status: 'succeeded', details: {} },
    failed: {
      type: 'payment_intent.payment_failed',
      status: 'requires_payment_method',
      details: {
        last_payment_error: {
          code: 'card_declined',
          message: 'Your card was declined (sandbox: amounts ending in 13 fail).',
        },
      },
    },
  },
  withdrawal: {
    idPrefix: 'po',
    object: 'payout',
    succeeded: { type: 'payout.paid', status: 'paid', details: {} },
    failed: {
      type: 'payout.failed',
      status: 'failed',
      details: {
        failure_code: 'account_closed',
        failure_message: 'The bank account has been closed (sandbox: amounts ending in 13 fail).',
      },
    },
  },
} as const;

const SANDBOX_NAMESPACE = '0b6f5c2e-91d4-5a7b-8c3e-2f4d6a8b1c09';

/** A failed payment attempt is not final at Stripe; the sandbox then cancels the payment, as a merchant would. */
const CANCELED_PAYMENT = {
  type: 'payment_intent.canceled',
  status: 'canceled',
  details: { cancellation_reason: 'abandoned' },
} as const;

/**
 * The events the provider sends for a request, in its order: one, or for a failing deposit the failed attempt
 * and then the cancellation. The same request always gets the same event ids.
 */
export function buildProviderEvents(
  movement: MoneyMovement,
  request: MovementRequest,
  now: Date,
): ProviderEvent[] {
  const kind = PROVIDER_EVENTS[movement];
  const result = sandboxOutcome(request.amount);
  const outcomes = [
    kind[result],
    ...(movement === 'deposit' && result === 'failed' ? [CANCELED_PAYMENT] : []),
  ];
  return outcomes.map((outcome, i) => ({
    id: `evt_${uuidv5(`${movement}:${request.requestEventId}${i === 0 ? '' : `:${i}`}`, SANDBOX_NAMESPACE)}`,
    object: 'event',
    type: outcome.type,
    created: Math.floor(now.getTime() / 1000),
    livemode: false,
    data: {
      object: {
        id: `${kind.idPrefix}_${uuidv5(`${movement}:${request.transactionId}`, SANDBOX_NAMESPACE)}`,
        object: kind.object,
        amount: request.amount,
        currency: request.currency.toLowerCase(),
        status: outcome.status,
        metadata: { transaction_id: request.transactionId },
        ...outcome.details,
      },
    },
  }));
}
