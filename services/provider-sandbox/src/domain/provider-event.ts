import { v5 as uuidv5 } from 'uuid';

export interface MovementRequest {
  /** The id of the WithdrawalRequested event: the same request gets the same provider event. */
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
  object: 'payout';
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

/** What the provider reports for a payout, by outcome. */
const PAYOUT_EVENTS = {
  succeeded: { type: 'payout.paid', status: 'paid', details: {} },
  failed: {
    type: 'payout.failed',
    status: 'failed',
    details: {
      failure_code: 'account_closed',
      failure_message: 'The bank account has been closed (sandbox: amounts ending in 13 fail).',
    },
  },
} as const;

const SANDBOX_NAMESPACE = '0b6f5c2e-91d4-5a7b-8c3e-2f4d6a8b1c09';

/** The event the provider sends for a payout request; the same request always gets the same event id. */
export function buildPayoutEvent(request: MovementRequest, now: Date): ProviderEvent {
  const outcome = PAYOUT_EVENTS[sandboxOutcome(request.amount)];
  return {
    id: `evt_${uuidv5(`withdrawal:${request.requestEventId}`, SANDBOX_NAMESPACE)}`,
    object: 'event',
    type: outcome.type,
    created: Math.floor(now.getTime() / 1000),
    livemode: false,
    data: {
      object: {
        id: `po_${uuidv5(`withdrawal:${request.transactionId}`, SANDBOX_NAMESPACE)}`,
        object: 'payout',
        amount: request.amount,
        currency: request.currency.toLowerCase(),
        status: outcome.status,
        metadata: { transaction_id: request.transactionId },
        ...outcome.details,
      },
    },
  };
}
