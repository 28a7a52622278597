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

export function buildProviderEvent(
  movement: MoneyMovement,
  request: MovementRequest,
  now: Date,
): ProviderEvent {
  const kind = PROVIDER_EVENTS[movement];
  const outcome = kind[sandboxOutcome(request.amount)];
  return {
    id: `evt_${uuidv5(`${movement}:${request.requestEventId}`, SANDBOX_NAMESPACE)}`,
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
  };
}
