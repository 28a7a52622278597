import { createHmac, randomUUID } from 'node:crypto';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Signs as a Stripe-style provider does (`Provider-Signature`), independently of the services' own code. */
export function providerSignature(body: string, secret: string, timestamp = nowSeconds()): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/** A provider event about one ledger transaction: `payment_intent.*` for deposits, `payout.*` for withdrawals. */
export function providerEvent(type: string, transactionId: string, amountMinor: number, currency = 'usd') {
  const payout = type.startsWith('payout.');
  return {
    id: `evt_${randomUUID()}`,
    object: 'event',
    type,
    created: nowSeconds(),
    data: {
      object: {
        id: `${payout ? 'po' : 'pi'}_${randomUUID()}`,
        object: payout ? 'payout' : 'payment_intent',
        amount: amountMinor,
        currency,
        status: type.endsWith('succeeded') || type.endsWith('paid') ? 'succeeded' : 'failed',
        metadata: { transaction_id: transactionId },
      },
    },
  };
}
