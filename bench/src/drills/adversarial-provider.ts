import type Stripe from 'stripe';
import type { HttpClient } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import type { BenchClient } from '../harness/users.js';
import type { DeletedUser, LatePayout, ProviderAnswer, RefundedDeposit } from './adversarial-checks.js';
import { addTo } from './valuation.js';

export type PartyKind = 'honest' | 'fx' | 'splitter' | 'late' | 'deletion';

export interface PartyAccount {
  id: string;
  userId: string;
  currency: string;
}

/** A client (or a group acting together): its ledger accounts, and the connected accounts it is paid out to. */
export interface Party {
  name: string;
  kind: PartyKind;
  accounts: PartyAccount[];
  /** The connected account (`acct_…`) each of its users linked with POST /payout-account. */
  payoutAccounts: string[];
}

export const createParty = (name: string, kind: PartyKind): Party => ({
  name,
  kind,
  accounts: [],
  payoutAccounts: [],
});

/** A deposit or withdrawal the system accepted (202), in minor units. */
export interface Movement {
  id: string;
  accountId: string;
  currency: string;
  amount: bigint;
  fee: bigint;
}

export interface ProviderStats {
  /** Deposits whose PaymentIntent the drill paid at the sandbox, and those it could not pay. */
  paid: number;
  unpaid: number;
  /** Held payouts the drill released, and releases the sandbox did not answer 200. */
  released: number;
  unreleased: number;
}

export type PayoutOutcome = 'paid' | 'failed';

/**
 * The payment provider is the sandbox, which the ledger asks through its Stripe adapter: for each deposit a
 * PaymentIntent, which the drill pays as the payer would (pm_card_visa), and for each withdrawal a transfer to the
 * user's connected account and a payout from it, which the sandbox holds (SANDBOX_HOLD_PAYOUTS) until the drill,
 * playing the bank, releases it paid or failed. What crossed the edge for each party is read afterwards from the
 * sandbox's own records (readProviderBooks).
 */
export interface SandboxProvider {
  /** Notes a deposit or withdrawal the system accepted for the party: the sandbox's records name its transaction. */
  accepted(party: Party, movement: Movement): void;
  /** Pays the deposit's PaymentIntent once the ledger has made it; false if it could not be paid. */
  payDeposit(owner: BenchClient, deposit: Movement): Promise<boolean>;
  /**
   * Waits until the ledger has made the withdrawal's payout at the sandbox: its id (`po_…`), or null when it made
   * none within `timeoutMs` (or the withdrawal ended without one).
   */
  payoutOf(owner: BenchClient, withdrawalId: string, timeoutMs: number): Promise<string | null>;
  /** The bank answers a held payout now, as told (POST /sandbox/payouts/{id}/release). */
  releasePayout(payoutId: string, outcome: PayoutOutcome): Promise<boolean>;
  /** Every deposit and withdrawal accepted, by transaction id. */
  movements: ReadonlyMap<string, { party: Party; movement: Movement }>;
  latePayouts: LatePayout[];
  stats: ProviderStats;
}

const READ_EVERY_MS = 25;

export function createSandboxProvider(
  stripe: Stripe,
  sandbox: HttpClient,
  sandboxApiKey: string,
): SandboxProvider {
  const stats: ProviderStats = { paid: 0, unpaid: 0, released: 0, unreleased: 0 };
  const movements = new Map<string, { party: Party; movement: Movement }>();

  /** The provider's reference the ledger shows its owner on the transaction once it has asked the sandbox. */
  const referenceOf = async (owner: BenchClient, transactionId: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = await owner.transactions.get(transactionId).catch(() => null);
      const reference = shown?.provider_payment?.reference;
      if (reference) return reference;
      if ((shown && shown.status !== 'pending') || Date.now() > deadline) return null;
      await sleep(READ_EVERY_MS);
    }
  };

  return {
    movements,
    latePayouts: [],
    stats,
    accepted(party, movement) {
      movements.set(movement.id, { party, movement });
    },
    async payDeposit(owner, deposit) {
      const reference = await referenceOf(owner, deposit.id, 30_000);
      const paid =
        reference !== null &&
        (await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' }).then(
          (intent) => intent.status === 'succeeded',
          () => false,
        ));
      stats[paid ? 'paid' : 'unpaid'] += 1;
      return paid;
    },
    payoutOf: referenceOf,
    async releasePayout(payoutId, outcome) {
      // Raw: the sandbox's own route (the drill plays the bank), not a payments API operation.
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const answer = await sandbox
          .send({
            method: 'POST',
            path: `/sandbox/payouts/${payoutId}/release`,
            headers: { authorization: `Bearer ${sandboxApiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ outcome }),
          })
          .catch(() => null);
        if (answer && answer.status < 500) {
          stats[answer.status === 200 ? 'released' : 'unreleased'] += 1;
          return answer.status === 200;
        }
        await sleep(100 * 2 ** attempt);
      }
      stats.unreleased += 1;
      return false;
    },
  };
}

/** What the sandbox's own records say crossed the edge, and what the ledger must have booked for it. */
export interface ProviderBooks {
  /**
   * Per party: what the sandbox captured for its deposits, paid out to its users' banks, and gave back to the
   * payers of its deposits (refunds), in minor units.
   */
  parties: Map<Party, PartyBooks>;
  /** Each capture and each answered payout, with the entry it must have written on the user's account. */
  answers: ProviderAnswer[];
  /** Withdrawals the sandbox made a payout for. */
  handedOut: Set<string>;
  /** Payouts still pending: held and never released. */
  pendingPayouts: number;
  /** Captures and payouts for no deposit or withdrawal the drill made. */
  unattributed: number;
  /** What the platform holds at the sandbox (GET /v1/balance), by currency. */
  platform: Map<string, bigint>;
  /** By currency: transferred to connected accounts, less taken back, less paid out (0 once all settled). */
  leftOnConnected: Map<string, bigint>;
}

interface PartyBooks {
  entered: Map<string, bigint>;
  exited: Map<string, bigint>;
  refunded: Map<string, bigint>;
}

const PAGE = { limit: 100 } as const;

/**
 * Reads the sandbox's books as reconciliation would, through its list endpoints: every PaymentIntent, every
 * transfer, each party's connected accounts' payouts, and the platform's balance.
 */
export async function readProviderBooks(
  stripe: Stripe,
  parties: readonly Party[],
  movements: SandboxProvider['movements'],
): Promise<ProviderBooks> {
  const books: ProviderBooks = {
    parties: new Map(
      parties.map((party) => [party, { entered: new Map(), exited: new Map(), refunded: new Map() }]),
    ),
    answers: [],
    handedOut: new Set(),
    pendingPayouts: 0,
    unattributed: 0,
    platform: new Map(),
    leftOnConnected: new Map(),
  };
  const movementOf = (metadata: Stripe.Metadata | null) => movements.get(metadata?.transaction_id ?? '');
  const sideOf = (party: Party) => {
    const side = books.parties.get(party) ?? {
      entered: new Map<string, bigint>(),
      exited: new Map<string, bigint>(),
      refunded: new Map<string, bigint>(),
    };
    books.parties.set(party, side);
    return side;
  };

  const paidFor = new Map<string, Party>();
  for await (const intent of stripe.paymentIntents.list(PAGE)) {
    if (intent.status !== 'succeeded') continue;
    const currency = intent.currency.toUpperCase();
    const found = movementOf(intent.metadata);
    if (!found) {
      books.unattributed += 1;
      continue;
    }
    paidFor.set(intent.id, found.party);
    addTo(sideOf(found.party).entered, currency, BigInt(intent.amount_received));
    books.answers.push({
      transactionId: found.movement.id,
      accountId: found.movement.accountId,
      kind: 'deposit',
      expectedDelta: BigInt(intent.amount_received) - found.movement.fee,
    });
  }

  // The drill refunds only deleted users' deposits (refundDeletedDeposits); it disputes none.
  for await (const refund of stripe.refunds.list(PAGE)) {
    const party = typeof refund.payment_intent === 'string' ? paidFor.get(refund.payment_intent) : undefined;
    if (party && refund.status === 'succeeded')
      addTo(sideOf(party).refunded, refund.currency.toUpperCase(), BigInt(refund.amount));
  }

  for await (const transfer of stripe.transfers.list(PAGE)) {
    const net = BigInt(transfer.amount - transfer.amount_reversed);
    addTo(books.leftOnConnected, transfer.currency.toUpperCase(), net);
  }

  for (const party of parties) {
    for (const account of party.payoutAccounts) {
      for await (const payout of stripe.payouts.list(PAGE, { stripeAccount: account })) {
        const currency = payout.currency.toUpperCase();
        const found = movementOf(payout.metadata);
        if (found) books.handedOut.add(found.movement.id);
        if (payout.status === 'pending') books.pendingPayouts += 1;
        if (payout.status !== 'paid' && payout.status !== 'failed') continue;
        if (!found) {
          books.unattributed += 1;
          continue;
        }
        const paid = payout.status === 'paid';
        if (paid) {
          addTo(sideOf(found.party).exited, currency, BigInt(payout.amount));
          addTo(books.leftOnConnected, currency, -BigInt(payout.amount));
        }
        books.answers.push({
          transactionId: found.movement.id,
          accountId: found.movement.accountId,
          kind: paid ? 'paid' : 'failed',
          expectedDelta: paid ? -(BigInt(payout.amount) + found.movement.fee) : null,
        });
      }
    }
  }

  for (const { currency, amount } of (await stripe.balance.retrieve()).available)
    books.platform.set(currency.toUpperCase(), BigInt(amount));
  return books;
}

/**
 * The platform refunds deposits of users deleted since, at the sandbox, as a merchant would whatever became of its
 * customer: a deposit of 2.00 or more in two refunds (half, then the rest: two refunded totals), a smaller one whole.
 * At most `limit` deposits. Nobody is left to take the money back from: the ledger must book each as a platform
 * loss.
 */
export async function refundDeletedDeposits(
  stripe: Stripe,
  movements: SandboxProvider['movements'],
  deleted: readonly DeletedUser[],
  limit: number,
): Promise<RefundedDeposit[]> {
  const gone = new Set(deleted.flatMap((user) => user.accountIds));
  const chosen: { intent: Stripe.PaymentIntent; transactionId: string }[] = [];
  for await (const intent of stripe.paymentIntents.list(PAGE)) {
    const found = movements.get(intent.metadata?.transaction_id ?? '');
    if (intent.status !== 'succeeded' || !found || !gone.has(found.movement.accountId)) continue;
    chosen.push({ intent, transactionId: found.movement.id });
    if (chosen.length >= limit) break;
  }
  const refunded: RefundedDeposit[] = [];
  for (const { intent, transactionId } of chosen) {
    const half = Math.floor(intent.amount_received / 2);
    const parts = half >= 100 ? [half, undefined] : [undefined];
    refunded.push(
      await refundInParts(
        stripe,
        intent.id,
        { transactionId, currency: intent.currency.toUpperCase() },
        parts,
      ),
    );
  }
  return refunded;
}

/** An operator's view of GET /admin/reconciliation, polled: when each withdrawal first showed up there. */
export interface ReconciliationDesk {
  /** Resolves with when the withdrawal was first listed, or null if it was not within `timeoutMs`. */
  flaggedWithin(transactionId: string, timeoutMs: number): Promise<number | null>;
  polls(): number;
  stop(): Promise<void>;
}

const DESK_PAGE = 100;

export function startReconciliationDesk(admin: BenchClient, intervalMs: number): ReconciliationDesk {
  const seen = new Map<string, number>();
  let polls = 0;
  let stopped = false;
  const poll = async () => {
    try {
      for await (const page of admin.admin.reconciliation.list({ limit: DESK_PAGE }).pages()) {
        const now = Date.now();
        for (const { id } of page.data) if (!seen.has(id)) seen.set(id, now);
      }
    } catch {
      // Unread this time; the next poll reads the list again.
    }
  };
  const loop = (async () => {
    while (!stopped) {
      polls += 1;
      await poll();
      await sleep(intervalMs);
    }
  })();
  return {
    async flaggedWithin(transactionId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!seen.has(transactionId) && Date.now() < deadline) await sleep(50);
      return seen.get(transactionId) ?? null;
    },
    polls: () => polls,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/**
 * Refunds a deposit's PaymentIntent at the sandbox, one refund per part (`undefined`: what is left), and what was
 * given back, as the platform-loss check expects it.
 */
export async function refundInParts(
  stripe: Stripe,
  paymentIntent: string,
  deposit: Pick<RefundedDeposit, 'transactionId' | 'currency'>,
  parts: readonly (number | undefined)[],
): Promise<RefundedDeposit> {
  const given: RefundedDeposit = { ...deposit, refunded: 0n, refunds: 0 };
  for (const amount of parts) {
    const refund = await stripe.refunds.create({
      payment_intent: paymentIntent,
      ...(amount === undefined ? {} : { amount }),
    });
    given.refunded += BigInt(refund.amount);
    given.refunds += 1;
  }
  return given;
}
