import type Stripe from 'stripe';

/**
 * The platform's own balance at the sandbox, by currency: what its payments captured, less what it refunded, less what
 * it transferred to connected accounts, plus what it took back from them. Its side of the books, which the ledger's
 * provider-clearing account must match once everything has settled.
 */
export interface PlatformBalance {
  add(currency: string, amount: number): void;
  retrieve(): Stripe.Balance;
}

export function createPlatformBalance(): PlatformBalance {
  const held = new Map<string, number>();
  return {
    add(currency, amount) {
      held.set(currency, (held.get(currency) ?? 0) + amount);
    },
    retrieve: () => ({
      object: 'balance',
      available: [...held].map(([currency, amount]) => ({
        amount,
        currency,
        source_types: { card: amount },
      })),
      livemode: false,
      pending: [],
    }),
  };
}
