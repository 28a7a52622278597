import { createHmac, randomUUID } from 'node:crypto';

const nowSeconds = () => Math.floor(Date.now() / 1000);

export { nowSeconds };

/** Signs as a Stripe-style provider does (`t=…,v1=…`), independently of the services' own code. */
export function providerSignature(
  body: string,
  secret: string,
  timestamp = nowSeconds(),
  scheme = 'v1',
): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},${scheme}=${mac}`;
}

/**
 * A provider event about one ledger transaction, `payment_intent.*` for deposits and `payout.*` for withdrawals, as
 * SPEC's stand-in for a provider sends it: the object is the transaction itself (its id is the transaction's).
 */
export function providerEvent(
  type: string,
  transactionId: string,
  amountMinor: number,
  currency = 'usd',
  extra: Record<string, unknown> = {},
) {
  const payout = type.startsWith('payout.');
  return {
    id: `evt_${randomUUID()}`,
    object: 'event',
    type,
    created: nowSeconds(),
    data: {
      object: {
        id: transactionId,
        object: payout ? 'payout' : 'payment_intent',
        amount: amountMinor,
        currency,
        status: type.endsWith('succeeded') || type.endsWith('paid') ? 'succeeded' : 'failed',
        metadata: { transaction_id: transactionId },
        ...extra,
      },
    },
  };
}

/** A signed provider event about a transaction: the body and the headers to post it with. */
export function signedProviderEvent(
  type: string,
  transactionId: string,
  amountMinor: number,
  secret: string,
) {
  const body = JSON.stringify(providerEvent(type, transactionId, amountMinor));
  return {
    body,
    headers: { 'content-type': 'application/json', 'provider-signature': providerSignature(body, secret) },
  };
}
