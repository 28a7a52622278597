import type { DrillReport } from './drill-context.js';
import {
  atMost,
  subtractFractions,
  sumHoldings,
  type Fraction,
  type Holdings,
  type Valuation,
} from './valuation.js';

export type Check = DrillReport['checks'][number];

/** One client (or group of clients) and the money that crossed the system's edge for it. */
export interface PartyMoney {
  name: string;
  /** What the provider captured for the party's deposits (its own records), minor units. */
  entered: Holdings;
  /** What the provider paid out on the party's withdrawals (its own records). */
  exited: Holdings;
  /**
   * What the provider gave back to the payers of the party's deposits (refunds): from a deleted user's deposit
   * that is the platform's loss, not the party's debt, so it does not count against what the party may hold.
   */
  refunded?: Holdings;
  /** What the party's accounts hold at the end. */
  held: Holdings;
}

const check = (name: string, discrepancies: number, detail: string): Check => ({
  name,
  ok: discrepancies === 0,
  detail,
  discrepancies,
});

/** What a party may hold at most: what it paid in, less what it took out. */
const entitlement = (valuation: Valuation, party: Pick<PartyMoney, 'entered' | 'exited'>): Fraction =>
  subtractFractions(valuation.ofHoldings(party.entered), valuation.ofHoldings(party.exited));

/** Each party holds, at the reference rates, no more than it deposited less what it withdrew. */
export function partyValueCheck(valuation: Valuation, parties: readonly PartyMoney[]): Check {
  const usd = (value: Fraction) => `${valuation.format(value)} ${valuation.currency}`;
  const over = parties.filter(
    (party) => !atMost(valuation.ofHoldings(party.held), entitlement(valuation, party)),
  );
  const shown = (over.length > 0 ? over : parties).slice(0, 3).map((party) => {
    const held = valuation.ofHoldings(party.held);
    return `${party.name} holds ${usd(held)} of ${usd(entitlement(valuation, party))}`;
  });
  return check(
    'no client gained value (each holds ≤ deposited − withdrawn, at reference rates)',
    over.length,
    `${parties.length} clients, ${over.length} above what they put in; ${over.length > 0 ? 'over' : 'e.g.'}: ${shown.join('; ')}`,
  );
}

/**
 * All users together hold no more than came in through the provider less what it paid out. What the house kept
 * (fees and rounding) is shown with what the platform lost besides (`lost`: deleted users' deposits the provider
 * gave back, which neither a user holds nor the provider paid out).
 */
export function totalValueCheck(
  valuation: Valuation,
  parties: readonly Pick<PartyMoney, 'entered' | 'exited'>[],
  held: Holdings,
  lost: Holdings = new Map(),
): Check {
  const entered = sumHoldings(parties.map((party) => party.entered));
  const exited = sumHoldings(parties.map((party) => party.exited));
  const allowed = entitlement(valuation, { entered, exited });
  const value = valuation.ofHoldings(held);
  const kept = subtractFractions(allowed, value);
  return check(
    "sum of all users' value not increased",
    atMost(value, allowed) ? 0 : 1,
    `users hold ${valuation.format(value)} ${valuation.currency}; deposited − withdrawn ${valuation.format(allowed)}; ` +
      `kept by the house (fees and rounding) ${valuation.format(kept)}; lost by the platform (deleted users' ` +
      `deposits refunded) ${valuation.format(valuation.ofHoldings(lost))}`,
  );
}

/**
 * The provider clearing account mirrors the provider: −(taken in − paid out − given back), per currency, exactly.
 */
export function clearingCheck(
  valuation: Valuation,
  parties: readonly Pick<PartyMoney, 'entered' | 'exited' | 'refunded'>[],
  clearing: Holdings,
): Check {
  const entered = sumHoldings(parties.map((party) => party.entered));
  const exited = sumHoldings(parties.map((party) => party.exited));
  const refunded = sumHoldings(parties.map((party) => party.refunded ?? new Map<string, bigint>()));
  const currencies = new Set([...entered.keys(), ...exited.keys(), ...refunded.keys(), ...clearing.keys()]);
  const lines: string[] = [];
  let off = 0;
  for (const currency of [...currencies].sort()) {
    const expected =
      (exited.get(currency) ?? 0n) + (refunded.get(currency) ?? 0n) - (entered.get(currency) ?? 0n);
    const actual = clearing.get(currency) ?? 0n;
    if (actual !== expected) off += 1;
    lines.push(
      `${currency} ${valuation.formatMinor(currency, actual)}${actual === expected ? '' : ` (expected ${valuation.formatMinor(currency, expected)})`}`,
    );
  }
  return check(
    'provider clearing = what the provider paid out − took in',
    off,
    lines.join('; ') || 'no money crossed the edge',
  );
}

/** The provider's books equal the ledger's: what the platform holds there is −(provider clearing), per currency. */
export function providerBooksCheck(valuation: Valuation, platform: Holdings, clearing: Holdings): Check {
  const currencies = new Set([...platform.keys(), ...clearing.keys()]);
  const lines: string[] = [];
  let off = 0;
  for (const currency of [...currencies].sort()) {
    const held = platform.get(currency) ?? 0n;
    const booked = -(clearing.get(currency) ?? 0n);
    if (held !== booked) off += 1;
    lines.push(
      `${currency} ${valuation.formatMinor(currency, held)}` +
        (held === booked ? '' : ` (the ledger says ${valuation.formatMinor(currency, booked)})`),
    );
  }
  return check(
    "the provider's books = the ledger's provider-clearing accounts (per currency)",
    off,
    `the sandbox holds for the platform: ${lines.join('; ') || 'nothing'}`,
  );
}

/** What the provider's records must show once everything settled. */
export interface ProviderLeftovers {
  /** Payouts never answered by the bank. */
  pendingPayouts: number;
  /** Captures and payouts for no deposit or withdrawal a client made. */
  unattributed: number;
  /** By currency: transferred to connected accounts, less taken back, less paid out. */
  leftOnConnected: Holdings;
}

/** At the provider nothing is left half-way: every payout answered, every transfer paid out or taken back. */
export function leftoversCheck(valuation: Valuation, records: ProviderLeftovers): Check {
  const stranded = [...records.leftOnConnected].filter(([, amount]) => amount !== 0n);
  const shown = stranded.map(
    ([currency, amount]) => `${valuation.formatMinor(currency, amount)} ${currency}`,
  );
  return check(
    "the provider's records: every payout answered, nothing left on connected accounts, nothing unaccounted for",
    records.pendingPayouts + records.unattributed + stranded.length,
    `${records.pendingPayouts} payouts still pending, ${records.unattributed} captures or payouts for no ` +
      `client's request; left on connected accounts: ${shown.join(', ') || 'nothing'}`,
  );
}

export interface Conversion {
  id: string;
  amount: bigint;
  currency: string;
  convertedAmount: bigint;
  convertedCurrency: string;
}

/** No settled cross-currency transfer credited more value than it debited (fees aside). */
export function conversionCheck(valuation: Valuation, conversions: readonly Conversion[]): Check {
  let kept: Fraction = { num: 0n, den: 1n };
  const gained = conversions.filter((conversion) => {
    const out = valuation.of(conversion.currency, conversion.amount);
    const into = valuation.of(conversion.convertedCurrency, conversion.convertedAmount);
    kept = subtractFractions(kept, subtractFractions(into, out));
    return !atMost(into, out);
  });
  const example = gained[0]
    ? `; e.g. ${valuation.formatMinor(gained[0].currency, gained[0].amount)} ${gained[0].currency} → ` +
      `${valuation.formatMinor(gained[0].convertedCurrency, gained[0].convertedAmount)} ${gained[0].convertedCurrency}`
    : '';
  return check(
    'no conversion credited more than it debited (FX cycling)',
    gained.length,
    `${conversions.length} conversions settled, ${gained.length} in the user's favour; ` +
      `rounding kept by the house ${valuation.format(kept, 6)} ${valuation.currency}${example}`,
  );
}

export type ChargedType = 'deposit' | 'withdrawal' | 'transfer';

/** The configured percentage fee per transaction type, e.g. `{ deposit: '0.5' }` for 0.5 %. */
export type PercentFees = Record<ChargedType, string>;

export interface Charge {
  type: ChargedType;
  amount: bigint;
  fee: bigint;
}

/** Every completed transaction paid at least its exact percentage: pieces never pay less than the whole. */
export function feeCheck(fees: PercentFees, charges: readonly Charge[]): Check {
  const percent = (type: ChargedType) => {
    const [whole, decimals = ''] = fees[type].split('.');
    return { units: BigInt(`${whole}${decimals}`), scale: 10n ** BigInt(decimals.length) };
  };
  const rules = {
    deposit: percent('deposit'),
    withdrawal: percent('withdrawal'),
    transfer: percent('transfer'),
  };
  let below = 0;
  let tiny = 0;
  for (const { type, amount, fee } of charges) {
    const { units, scale } = rules[type];
    // fee ≥ amount × percent / 100, compared exactly.
    if (fee * 100n * scale < amount * units) below += 1;
    if (units > 0n && amount * units < 100n * scale) tiny += 1;
  }
  return check(
    'no fee below its percentage (fee splitting)',
    below,
    `${charges.length} completed transactions, ${tiny} so small their exact fee is under one minor unit; ${below} charged less than ${fees.deposit} % / ${fees.transfer} % / ${fees.withdrawal} % (deposit / transfer / withdrawal)`,
  );
}

/** A capture or an answered payout in the provider's records, and what it must have done to the user's account. */
export interface ProviderAnswer {
  transactionId: string;
  accountId: string;
  kind: 'deposit' | 'paid' | 'failed';
  /** The entry the answer must have written on the account: amount − fee, −(amount + fee), or none. */
  expectedDelta: bigint | null;
}

/** Journal entries of one transaction on its user account. */
export interface Booking {
  count: number;
  sum: bigint;
}

/** Every capture and answered payout booked exactly once, for exactly its amount (the journal outlives deleted users). */
export function answersCheck(
  answers: readonly ProviderAnswer[],
  bookings: ReadonlyMap<string, Booking>,
): Check {
  const wrong = answers.filter((answer) => {
    const booking = bookings.get(answer.transactionId) ?? { count: 0, sum: 0n };
    if (answer.expectedDelta === null) return booking.count !== 0;
    return booking.count !== 1 || booking.sum !== answer.expectedDelta;
  });
  const counts = { deposit: 0, paid: 0, failed: 0 };
  for (const answer of answers) counts[answer.kind] += 1;
  return check(
    "every capture and payout in the provider's records took effect exactly once",
    wrong.length,
    `${counts.deposit} deposits captured, ${counts.paid} payouts paid, ${counts.failed} payouts failed; ${wrong.length} not booked exactly once for their amount`,
  );
}

/** A withdrawal whose payout the provider held past its hold expiry, and the late answer its bank then gave. */
export interface LatePayout {
  id: string;
  outcome: 'paid' | 'failed';
  /** When the drill first saw it in GET /admin/reconciliation, and when it had the payout answered (ms). */
  seenFlaggedAt: number | null;
  answeredAt: number;
}

export interface WithdrawalState {
  status: string;
  flaggedAt: number | null;
  booking: Booking;
}

/** Flagged before the late answer, then settled by that answer once: debited once if paid, untouched if failed. */
export function latePayoutCheck(
  payouts: readonly LatePayout[],
  states: ReadonlyMap<string, WithdrawalState>,
): Check {
  let unflagged = 0;
  let wrong = 0;
  for (const payout of payouts) {
    const state = states.get(payout.id);
    const flagged =
      state?.flaggedAt != null &&
      payout.seenFlaggedAt !== null &&
      state.flaggedAt <= payout.answeredAt &&
      payout.seenFlaggedAt <= payout.answeredAt;
    if (!flagged) unflagged += 1;
    const settled =
      payout.outcome === 'paid'
        ? state?.status === 'completed' && state.booking.count === 1
        : state?.status === 'failed' && state.booking.count === 0;
    if (!settled) wrong += 1;
  }
  const paid = payouts.filter((payout) => payout.outcome === 'paid').length;
  return check(
    'late payouts: flagged for reconciliation before the answer, then settled exactly once',
    unflagged + wrong,
    `${payouts.length} withdrawals answered only after their hold expired (${paid} paid, ${payouts.length - paid} failed, each event delivered twice); ` +
      `${unflagged} not flagged first, ${wrong} not settled once as answered`,
  );
}

/** A user whose deletion was answered 204, and the accounts it had. */
export interface DeletedUser {
  userId: string;
  accountIds: readonly string[];
}

/** Nobody deleted with money: their accounts are gone and the journal on them nets to zero. */
export function deletionCheck(
  deleted: readonly DeletedUser[],
  journal: ReadonlyMap<string, bigint>,
  remainingAccounts: ReadonlySet<string>,
): Check {
  const holding = deleted.filter((user) =>
    user.accountIds.some((id) => remainingAccounts.has(id) || (journal.get(id) ?? 0n) !== 0n),
  );
  const withHistory = deleted.filter((user) => user.accountIds.some((id) => journal.has(id))).length;
  return check(
    'no user deleted while holding money',
    holding.length,
    `${deleted.length} users deleted (${withHistory} after money had moved through their accounts); ${holding.length} left money behind or kept an account`,
  );
}

/** A deleted user's deposit the platform refunded at the provider: what it gave back, in how many refunds. */
export interface RefundedDeposit {
  transactionId: string;
  currency: string;
  refunded: bigint;
  refunds: number;
}

/** A platform loss as the ledger booked it. */
export interface BookedLoss {
  depositId: string;
  currency: string;
  amount: bigint;
  fee: bigint;
}

/**
 * The refunds of a deleted user's deposit are booked as platform losses for exactly what the provider gave back,
 * in at most one loss per refund (losses follow the refunded total: a refund whose event was lost or came late is
 * covered by the next total, ADR 0051), no loss is booked on anything else, and the platform loss accounts hold
 * exactly the losses: what was given back less the fee shares fee revenue gave back.
 */
export function platformLossCheck(
  valuation: Valuation,
  refunded: readonly RefundedDeposit[],
  losses: readonly BookedLoss[],
  lossAccounts: Holdings,
): Check {
  const byDeposit = new Map<string, BookedLoss[]>();
  for (const loss of losses) byDeposit.set(loss.depositId, [...(byDeposit.get(loss.depositId) ?? []), loss]);
  const wrong = refunded.filter((deposit) => {
    const booked = byDeposit.get(deposit.transactionId) ?? [];
    const total = booked.reduce((sum, loss) => sum + loss.amount, 0n);
    return booked.length === 0 || booked.length > deposit.refunds || total !== deposit.refunded;
  });
  const refundedIds = new Set(refunded.map((deposit) => deposit.transactionId));
  const astray = losses.filter((loss) => !refundedIds.has(loss.depositId)).length;
  const lost = new Map<string, bigint>();
  for (const loss of losses)
    lost.set(loss.currency, (lost.get(loss.currency) ?? 0n) + loss.amount - loss.fee);
  const currencies = [...new Set([...lost.keys(), ...lossAccounts.keys()])].sort();
  const accountsOff = currencies.filter(
    (currency) => -(lossAccounts.get(currency) ?? 0n) !== (lost.get(currency) ?? 0n),
  );
  const given = refunded.reduce((sum, deposit) => sum + deposit.refunds, 0);
  return check(
    "the refunds of deleted users' deposits booked as platform losses, once, for what was given back",
    wrong.length + astray + accountsOff.length,
    `${refunded.length} deposits of deleted users refunded at the provider (${given} refunds, ${losses.length} ` +
      `losses booked), ${wrong.length} not booked for exactly what was given back, ${astray} losses on other ` +
      'deposits; lost: ' +
      (currencies
        .map((currency) => `${valuation.formatMinor(currency, lost.get(currency) ?? 0n)} ${currency}`)
        .join(', ') || 'nothing') +
      (accountsOff.length > 0 ? `; loss accounts off in ${accountsOff.join(', ')}` : ''),
  );
}
