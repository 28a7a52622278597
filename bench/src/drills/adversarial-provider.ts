import type { HttpClient } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import type { ProviderRequests } from '../harness/provider-requests.js';
import { deliverProviderEvent, payoutEventBody, providerEventBody } from '../harness/provider-webhooks.js';
import type { LatePayout, ProviderAnswer } from './adversarial-checks.js';
import { addTo } from './valuation.js';

export type PartyKind = 'honest' | 'fx' | 'splitter' | 'late' | 'deletion';

export interface PartyAccount {
  id: string;
  userId: string;
  currency: string;
}

/** A client (or a group acting together) and the money the drill's provider moved across the edge for it. */
export interface Party {
  name: string;
  kind: PartyKind;
  accounts: PartyAccount[];
  /** Deposits the provider confirmed (answered 200), minor units by currency. */
  entered: Map<string, bigint>;
  /** Payouts the provider reported paid (answered 200). */
  exited: Map<string, bigint>;
}

export const createParty = (name: string, kind: PartyKind): Party => ({
  name,
  kind,
  accounts: [],
  entered: new Map(),
  exited: new Map(),
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
  deliveries: number;
  attempts: number;
  /** Deliveries never answered 200 before the sender gave up. */
  abandoned: number;
}

/**
 * The payment provider, played by the drill: it confirms the deposits it is paid for and answers the payouts it
 * was handed, with signed webhooks through the gateway, retrying every answer but 200. It books what entered and
 * left on the party's side, so the drill knows exactly what crossed the edge.
 */
export interface DrillProvider {
  confirmDeposit(party: Party, deposit: Movement): Promise<boolean>;
  /** Pays or fails a payout it was handed: `copies` distinct events, the first also redelivered as is. */
  answerPayout(
    party: Party,
    withdrawal: Movement,
    outcome: 'paid' | 'failed',
    copies?: number,
  ): Promise<boolean>;
  requests: ProviderRequests;
  answers: ProviderAnswer[];
  latePayouts: LatePayout[];
  stats: ProviderStats;
}

export function createDrillProvider(
  gateway: HttpClient,
  secret: string,
  requests: ProviderRequests,
  giveUpAt: () => number,
): DrillProvider {
  const stats: ProviderStats = { deliveries: 0, attempts: 0, abandoned: 0 };
  const answers: ProviderAnswer[] = [];
  const deliver = async (body: string) => {
    stats.deliveries += 1;
    const { delivered, attempts } = await deliverProviderEvent(gateway, body, secret, giveUpAt);
    stats.attempts += attempts;
    if (!delivered) stats.abandoned += 1;
    return delivered;
  };
  return {
    requests,
    answers,
    latePayouts: [],
    stats,
    async confirmDeposit(party, deposit) {
      const body = providerEventBody({
        transactionId: deposit.id,
        amount: Number(deposit.amount),
        currency: deposit.currency,
      });
      if (!(await deliver(body))) return false;
      addTo(party.entered, deposit.currency, deposit.amount);
      answers.push({
        transactionId: deposit.id,
        accountId: deposit.accountId,
        kind: 'deposit',
        expectedDelta: deposit.amount - deposit.fee,
      });
      return true;
    },
    async answerPayout(party, withdrawal, outcome, copies = 1) {
      let answered = false;
      for (let copy = 0; copy < copies; copy += 1) {
        const body = payoutEventBody({
          transactionId: withdrawal.id,
          amount: Number(withdrawal.amount),
          currency: withdrawal.currency,
          outcome,
        });
        if (await deliver(body)) answered = true;
        // A provider retrying a delivery it thinks was lost: the very same event again.
        if (copy === 0 && copies > 1 && (await deliver(body))) answered = true;
      }
      if (!answered) return false;
      if (outcome === 'paid') addTo(party.exited, withdrawal.currency, withdrawal.amount);
      answers.push({
        transactionId: withdrawal.id,
        accountId: withdrawal.accountId,
        kind: outcome,
        expectedDelta: outcome === 'paid' ? -(withdrawal.amount + withdrawal.fee) : null,
      });
      return true;
    },
  };
}

/** An operator's view of GET /admin/reconciliation, polled: when each withdrawal first showed up there. */
export interface ReconciliationDesk {
  /** Resolves with when the withdrawal was first listed, or null if it was not within `timeoutMs`. */
  flaggedWithin(transactionId: string, timeoutMs: number): Promise<number | null>;
  polls(): number;
  stop(): Promise<void>;
}

const PAGE = 100;

export function startReconciliationDesk(
  gateway: HttpClient,
  adminToken: string,
  intervalMs: number,
): ReconciliationDesk {
  const seen = new Map<string, number>();
  let polls = 0;
  let stopped = false;
  const poll = async () => {
    for (let offset = 0; ; offset += PAGE) {
      const page = await gateway
        .json<{ data: { id: string }[] }>({
          method: 'GET',
          path: `/admin/reconciliation?limit=${PAGE}&offset=${offset}`,
          token: adminToken,
        })
        .catch(() => ({ data: [] }));
      const now = Date.now();
      for (const { id } of page.data) if (!seen.has(id)) seen.set(id, now);
      if (page.data.length < PAGE) return;
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
