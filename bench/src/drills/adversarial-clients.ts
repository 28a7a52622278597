import { randomUUID } from 'node:crypto';
import { ApiError, type Transaction } from '@payments/client';
import { bearerCall, type HttpClient } from '../harness/http-client.js';
import type { LedgerDatabase } from '../harness/ledger-db.js';
import { sleep } from '../harness/load.js';
import { signUp, type BenchClient } from '../harness/users.js';
import type { DeletedUser } from './adversarial-checks.js';
import type {
  Movement,
  Party,
  PartyAccount,
  ReconciliationDesk,
  SandboxProvider,
} from './adversarial-provider.js';
import type { Valuation } from './valuation.js';

/** What the clients share: the system's front door, the provider (the sandbox), the desk, and the tallies. */
export interface Arena {
  /** Where members sign up (through `@payments/client`). */
  gatewayUrl: string;
  /** Raw HTTP through the gateway, for the money requests and deletions the attacks are made of (see `call`). */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  provider: SandboxProvider;
  desk: ReconciliationDesk;
  valuation: Valuation;
  /** Attack loops start no new round after this (ms since epoch); a round under way finishes. */
  until: number;
  holdExpiryMs: number;
  sweepMs: number;
  /** Operations by name, as the report prints them. */
  operations: Record<string, number>;
  deleted: DeletedUser[];
  /** Attacks that got through: money spent while held, a user deleted while a payout was outstanding. */
  breaches: string[];
}

export interface Member {
  userId: string;
  /** The member's client: set-up, funding, reads and checks. */
  client: BenchClient;
  /** The member's bearer token, for the raw money requests and deletions of the attacks. */
  token: string;
  accounts: PartyAccount[];
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const V1_1 = { 'x-api-version': '1.1' };

const count = (arena: Arena, what: string, n = 1) => {
  arena.operations[what] = (arena.operations[what] ?? 0) + n;
};

const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

/**
 * Raw: the requests the attacks and the honest traffic are made of (money requests, deletions), whose every answer
 * is tallied and whose retries keep one fixed Idempotency-Key on the drill's schedule (postMoney).
 */
async function call(
  arena: Arena,
  method: string,
  path: string,
  token: string,
  json?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const answer = await arena.gateway
    .send(bearerCall(method, path, token, json, { ...V1_1, ...headers }))
    .catch(() => null);
  if (!answer) return { status: 0, body: {} };
  let body: Record<string, unknown> = {};
  try {
    body = answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
  } catch {
    // Not JSON; the status says enough.
  }
  return { status: answer.status, body };
}

/** A money request as a careful client sends it: one Idempotency-Key, repeated on a 5xx or a lost answer. */
async function postMoney(arena: Arena, path: string, token: string, json: unknown): Promise<Answer> {
  const key = randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    const answer = await call(arena, 'POST', path, token, json, { 'idempotency-key': key });
    if (answer.status !== 0 && answer.status < 500) return answer;
    count(arena, 'retried after a 5xx or lost answer');
    if (attempt >= 8) return answer;
    await sleep(Math.min(100 * 2 ** attempt, 2000));
  }
}

/** Minor units as the JSON number of major units the API takes. */
const major = (arena: Arena, currency: string, minor: bigint) =>
  Number(arena.valuation.formatMinor(currency, minor));

const minorOf = (arena: Arena, currency: string, value: unknown) =>
  BigInt(Math.round(Number(value) * 10 ** arena.valuation.exponent(currency)));

/** A client call's outcome as a raw answer: the transaction and 202, the problem and its status, or 0 unanswered. */
const answerOf = (call: Promise<Transaction<'1.1'>>): Promise<Answer> =>
  call.then(
    (transaction) => ({ status: 202, body: transaction }),
    (error: unknown) =>
      error instanceof ApiError
        ? { status: error.status, body: { ...error.problem } }
        : { status: 0, body: {} },
  );

const movementOf = (arena: Arena, account: PartyAccount, answer: Answer): Movement => ({
  id: answer.body.id as string,
  accountId: account.id,
  currency: account.currency,
  amount: minorOf(arena, account.currency, answer.body.amount),
  fee: minorOf(arena, account.currency, answer.body.fee ?? 0),
});

/** A new user of the party with one account per currency given, and a connected account to be paid out to. */
export async function openMember(arena: Arena, party: Party, currencies: readonly string[]): Promise<Member> {
  const { userId, client, token } = await signUp(arena.gatewayUrl, party.kind);
  const accounts: PartyAccount[] = [];
  for (const currency of currencies) {
    accounts.push({ id: (await client.accounts.open({ currency })).id, userId, currency });
  }
  party.accounts.push(...accounts);
  party.payoutAccounts.push(await linkPayoutAccount(client));
  return { userId, client, token, accounts };
}

/** POST /payout-account: the ledger makes the user's connected account at the sandbox; its id. */
async function linkPayoutAccount(client: BenchClient): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return (await client.payoutAccount.link()).account;
    } catch (error) {
      // Linking again returns the same account: an attempt that failed unanswered or with a 5xx is repeated.
      if ((error instanceof ApiError && error.status < 500) || attempt >= 8) throw error;
    }
    await sleep(Math.min(100 * 2 ** attempt, 2000));
  }
}

async function balanceOf(arena: Arena, member: Member, account: PartyAccount) {
  const read = await member.client.balances.get(account.id).catch(() => null);
  if (!read) return null;
  count(arena, 'balance reads');
  return {
    balance: minorOf(arena, account.currency, read.balance),
    available: minorOf(arena, account.currency, read.available_balance),
  };
}

/** The transaction's status, or 'unknown' if it could not be read. */
const statusOf = (member: Member, id: string) =>
  member.client.transactions.get(id).then(
    (transaction): string => transaction.status,
    () => 'unknown',
  );

/** Polls the transaction until it is no longer pending; resolves with its status ('pending' if it never ended). */
async function outcomeOf(member: Member, id: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await statusOf(member, id);
    if (status !== 'pending' && status !== 'unknown') return status;
    if (Date.now() > deadline) return status;
    await sleep(100);
  }
}

/** Deposits and pays it at the sandbox; resolves with the movement, or null if it was not accepted. */
async function deposit(
  arena: Arena,
  party: Party,
  member: Member,
  account: PartyAccount,
  minor: bigint,
  label: string,
): Promise<Movement | null> {
  const answer = await postMoney(arena, `/account/${account.id}/deposit`, member.token, {
    amount: major(arena, account.currency, minor),
    currency: account.currency,
  });
  return payAccepted(arena, party, member, account, answer, label);
}

/** Notes an answered deposit with the provider and pays it at the sandbox; the movement, or null if not accepted. */
async function payAccepted(
  arena: Arena,
  party: Party,
  member: Member,
  account: PartyAccount,
  answer: Answer,
  label: string,
): Promise<Movement | null> {
  if (answer.status !== 202) {
    count(arena, `${label} ${answer.status === 422 ? 'refused (422)' : `answered ${answer.status}`}`);
    return null;
  }
  count(arena, `${label} accepted`);
  const movement = movementOf(arena, account, answer);
  arena.provider.accepted(party, movement);
  if (!(await arena.provider.payDeposit(member.client, movement)))
    count(arena, `${label} not paid at the sandbox`);
  return movement;
}

/** Deposits to fund the member (set-up, through the client), pays them and waits until every one is credited. */
export async function fund(
  arena: Arena,
  party: Party,
  member: Member,
  amounts: readonly { account: PartyAccount; minor: bigint }[],
): Promise<void> {
  const deposits = await Promise.all(
    amounts.map(async ({ account, minor }) => {
      const answer = await answerOf(
        member.client.money.deposit(account.id, {
          amount: major(arena, account.currency, minor),
          currency: account.currency,
        }),
      );
      return payAccepted(arena, party, member, account, answer, 'funding deposits');
    }),
  );
  const ids = deposits.filter((d): d is Movement => d !== null).map((d) => d.id);
  const deadline = Date.now() + 60_000;
  while ((await arena.ledgerDb.completedAmong(ids)).length < ids.length) {
    if (Date.now() > deadline) throw new Error(`${party.name}: funding deposits not credited within 60 s`);
    await sleep(50);
  }
}

async function transfer(
  arena: Arena,
  member: Member,
  from: PartyAccount,
  to: string,
  minor: bigint,
  label: string,
): Promise<Answer> {
  const answer = await postMoney(arena, `/account/${from.id}/transfer`, member.token, {
    amount: major(arena, from.currency, minor),
    currency: from.currency,
    to_account_id: to,
  });
  if (answer.status === 202) count(arena, `${label} accepted`);
  else if (answer.status === 422) count(arena, `${label} refused (422)`);
  else count(arena, `${label} answered ${answer.status}`);
  return answer;
}

/** Withdraws, and once the ledger has made the payout at the sandbox, its bank pays it at once. */
async function withdrawPromptly(
  arena: Arena,
  party: Party,
  member: Member,
  account: PartyAccount,
  minor: bigint,
  label: string,
): Promise<void> {
  const answer = await postMoney(arena, `/account/${account.id}/withdraw`, member.token, {
    amount: major(arena, account.currency, minor),
    currency: account.currency,
  });
  if (answer.status !== 202) {
    count(arena, `${label} ${answer.status === 422 ? 'refused (422)' : `answered ${answer.status}`}`);
    return;
  }
  const withdrawal = movementOf(arena, account, answer);
  arena.provider.accepted(party, withdrawal);
  const payout = await arena.provider.payoutOf(member.client, withdrawal.id, arena.holdExpiryMs + 10_000);
  if (payout && (await arena.provider.releasePayout(payout, 'paid'))) count(arena, `${label} paid`);
  else count(arena, `${label} never handed to the provider`);
  await outcomeOf(member, withdrawal.id);
}

/** Ordinary customers: transfers to each other (some across currencies), balance reads, deposits, payouts. */
export async function runHonestClient(arena: Arena, party: Party, member: Member, others: readonly Member[]) {
  while (Date.now() < arena.until) {
    const roll = Math.random();
    const own = pick(member.accounts);
    if (roll < 0.6) {
      const to = pick(pick(others).accounts);
      await transfer(arena, member, own, to.id, BigInt(between(100, 5000)), 'honest: transfers');
    } else if (roll < 0.85) {
      const read = await balanceOf(arena, member, own);
      if (read && (read.balance < 0n || read.available < 0n)) arena.breaches.push('negative balance shown');
    } else if (roll < 0.93) {
      await deposit(arena, party, member, own, BigInt(between(1000, 10_000)), 'honest: deposits');
    } else {
      await withdrawPromptly(arena, party, member, own, BigInt(between(100, 2000)), 'honest: withdrawals');
    }
  }
}

const DUST_SEARCH = 60;
const DUST_CHOICES = 4;

/**
 * The amounts (minor units of `from`, up to 60) an FX cycler would pick at a served rate: those that rounding
 * to nearest would credit most generously relative to their exact conversion (0.01 USD → 1.5721 JPY → 2).
 * Rounded down, as the ledger must, they are merely small losses.
 */
export function favourableDust(rate: string, fromExponent: number, toExponent: number): bigint[] {
  const [whole, decimals = ''] = rate.split('.');
  const units = BigInt(`${whole}${decimals}`);
  const den = 10n ** BigInt(decimals.length + fromExponent);
  const scored: { amount: bigint; score: number }[] = [];
  for (let amount = 1n; amount <= BigInt(DUST_SEARCH); amount += 1n) {
    const num = amount * units * 10n ** BigInt(toExponent);
    const nearest = (2n * num + den) / (2n * den);
    // What rounding to nearest would give beyond the exact conversion, per unit of it.
    const gain = nearest * den - num;
    if (gain > 0n) scored.push({ amount, score: Number((gain * 1_000_000n) / num) });
  }
  scored.sort((a, b) => b.score - a.score);
  return scored.slice(0, DUST_CHOICES).map((found) => found.amount);
}

/** Reads the rates the system serves (public, through the gateway) and picks each direction's dust. */
export async function studyRates(arena: Arena, client: BenchClient, currencies: readonly string[]) {
  const dust = new Map<string, bigint[]>();
  for (const from of currencies) {
    const { rates } = await client.rates.list({ base: from });
    for (const to of currencies) {
      const rate = rates[to];
      if (from === to || rate === undefined) continue;
      const fromExponent = arena.valuation.exponent(from);
      dust.set(`${from}>${to}`, favourableDust(rate, fromExponent, arena.valuation.exponent(to)));
    }
  }
  return dust;
}

const FX_BURST = 4;

/**
 * FX cycling: bursts of the smallest cross-currency transfers between the attacker's own accounts, round and
 * round, at the amounts that would round most in its favour; now and then a larger chunk moves back.
 */
export async function runFxCycler(arena: Arena, member: Member, dust: ReadonlyMap<string, bigint[]>) {
  while (Date.now() < arena.until) {
    const from = pick(member.accounts);
    const to = pick(member.accounts.filter((account) => account !== from));
    if (Math.random() < 0.1) {
      const read = await balanceOf(arena, member, from);
      const chunk = read ? (read.available * BigInt(between(20, 60))) / 100n : 0n;
      if (chunk > 0n) await transfer(arena, member, from, to.id, chunk, 'FX cycling: transfers');
      continue;
    }
    const amounts = dust.get(`${from.currency}>${to.currency}`) ?? [1n];
    await Promise.all(
      Array.from({ length: FX_BURST }, () =>
        transfer(arena, member, from, to.id, pick(amounts), 'FX cycling: transfers'),
      ),
    );
  }
}

/** Fee splitting: many tiny transfers between two own accounts, and deposits in small pieces. */
export async function runFeeSplitter(arena: Arena, party: Party, member: Member) {
  const [first, second] = member.accounts as [PartyAccount, PartyAccount];
  while (Date.now() < arena.until) {
    if (Math.random() < 0.7) {
      const [from, to] = Math.random() < 0.5 ? [first, second] : [second, first];
      await Promise.all(
        Array.from({ length: 5 }, () =>
          transfer(arena, member, from, to.id, BigInt(between(1, 39)), 'fee splitting: transfer pieces'),
        ),
      );
    } else {
      await Promise.all(
        Array.from({ length: 3 }, () =>
          deposit(
            arena,
            party,
            member,
            pick(member.accounts),
            BigInt(between(1, 99)),
            'fee splitting: deposit pieces',
          ),
        ),
      );
    }
  }
}

/**
 * Late payouts: withdraws, lets the sandbox hold the payout past the hold expiry, and while it is flagged tries to
 * spend the held money and to delete itself; then the sandbox's bank answers late (each event delivered twice).
 */
export async function runLatePayoutAttacker(arena: Arena, party: Party, member: Member) {
  const [main, spare] = member.accounts as [PartyAccount, PartyAccount];
  while (Date.now() < arena.until) {
    const before = await balanceOf(arena, member, main);
    if (!before || before.available < 2_000n) {
      await fund(arena, party, member, [{ account: main, minor: 5_000n }]);
      continue;
    }
    const answers = await Promise.all(
      [0, 1].map(() =>
        postMoney(arena, `/account/${main.id}/withdraw`, member.token, {
          amount: major(arena, main.currency, BigInt(between(300, 900))),
          currency: main.currency,
        }),
      ),
    );
    const withdrawals = answers.filter((a) => a.status === 202).map((a) => movementOf(arena, main, a));
    count(arena, 'late payouts: withdrawals the provider sat on', withdrawals.length);
    const handed: { withdrawal: Movement; payout: string; seenFlaggedAt: number | null }[] = [];
    for (const withdrawal of withdrawals) {
      arena.provider.accepted(party, withdrawal);
      const payout = await arena.provider.payoutOf(member.client, withdrawal.id, arena.holdExpiryMs + 10_000);
      if (!payout) {
        // Never handed out: the expiry may take it back, and no provider can pay it.
        count(arena, 'late payouts: never handed to the provider (recalled at expiry)');
        await outcomeOf(member, withdrawal.id);
        continue;
      }
      const seenFlaggedAt = await arena.desk.flaggedWithin(withdrawal.id, arena.holdExpiryMs + 10_000);
      if (seenFlaggedAt === null) count(arena, 'late payouts: not listed for reconciliation in time');
      handed.push({ withdrawal, payout, seenFlaggedAt });
    }
    if (handed.length === 0) continue;
    const held = handed.reduce((sum, { withdrawal }) => sum + withdrawal.amount + withdrawal.fee, 0n);
    const smallest = handed.reduce(
      (low, { withdrawal }) => (withdrawal.amount < low ? withdrawal.amount : low),
      held,
    );

    // Spend what the payout still holds: more than is available, less than the balance.
    const during = await balanceOf(arena, member, main);
    if (during && during.balance - during.available !== held)
      arena.breaches.push('a flagged payout lost its hold');
    if (during) {
      count(arena, 'late payouts: spending the held money attempted');
      const spend = await transfer(
        arena,
        member,
        main,
        spare.id,
        during.available + smallest / 2n,
        'late payouts: spend',
      );
      if (spend.status === 202) arena.breaches.push('spent money held by a payout past its expiry');
    }
    count(arena, 'late payouts: deletion while awaiting reconciliation attempted');
    // Raw: the deletion is the attack; its answer is what the drill checks.
    const deletion = await call(arena, 'DELETE', `/user/${member.userId}?confirm=true`, member.token);
    if (deletion.status === 422) count(arena, 'late payouts: deletion refused (422)');
    else if (deletion.status === 204) {
      arena.breaches.push('deleted a user whose payout awaited reconciliation');
      return;
    } else count(arena, `late payouts: deletion answered ${deletion.status}`);

    // Through a few more sweeps: still pending, nothing released by a timer.
    await sleep(arena.sweepMs * 3);
    for (const { withdrawal, payout, seenFlaggedAt } of handed) {
      const status = await statusOf(member, withdrawal.id);
      if (status !== 'pending') arena.breaches.push(`flagged payout ${status} before its answer`);
      const outcome = Math.random() < 0.7 ? 'paid' : 'failed';
      const answeredAt = Date.now();
      if (!(await arena.provider.releasePayout(payout, outcome))) {
        count(arena, 'late payouts: release refused by the sandbox');
        continue;
      }
      arena.provider.latePayouts.push({ id: withdrawal.id, outcome, seenFlaggedAt, answeredAt });
      count(arena, `late payouts: answered ${outcome} late`);
    }
    for (const { withdrawal } of handed) await outcomeOf(member, withdrawal.id);
  }
}

const RACE_JITTER_MS = 60;

interface RaceResult {
  deleted: boolean;
  accepted: number;
}

/** Deposits confirmed and transfers arriving while the owner deletes themself. */
async function raceDeletion(
  arena: Arena,
  party: Party,
  sponsor: Member,
  leaver: Member,
  deposits: number,
  transfers: number,
): Promise<RaceResult> {
  const account = leaver.accounts[0] as PartyAccount;
  const jitter = () => sleep(Math.random() * RACE_JITTER_MS);
  let accepted = 0;
  const depositing = Array.from({ length: deposits }, async () => {
    await jitter();
    const movement = await deposit(
      arena,
      party,
      leaver,
      account,
      BigInt(between(100, 500)),
      'deletion races: deposits',
    );
    if (movement) accepted += 1;
  });
  const sending = Array.from({ length: transfers }, async () => {
    await jitter();
    const from = sponsor.accounts[0] as PartyAccount;
    const answer = await transfer(
      arena,
      sponsor,
      from,
      account.id,
      BigInt(between(100, 500)),
      'deletion races: incoming transfers',
    );
    if (answer.status === 202) accepted += 1;
  });
  const deleting = (async () => {
    // Sometimes the deletion comes first, sometimes the money: both orders must end with every cent accounted for.
    await sleep(Math.random() * (Math.random() < 0.5 ? RACE_JITTER_MS : RACE_JITTER_MS * 3));
    // Raw: the deletion is the attack, raced against the money; its answer is what the drill checks.
    return call(arena, 'DELETE', `/user/${leaver.userId}?confirm=true`, leaver.token);
  })();
  const [deletion] = await Promise.all([deleting, ...depositing, ...sending]);
  if (deletion.status === 204) {
    arena.deleted.push({ userId: leaver.userId, accountIds: leaver.accounts.map((a) => a.id) });
    return { deleted: true, accepted };
  }
  count(
    arena,
    `deletion races: deletion ${deletion.status === 422 ? 'refused (422)' : `answered ${deletion.status}`}`,
  );
  return { deleted: false, accepted };
}

async function untilQuiet(arena: Arena, accountId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await arena.ledgerDb.pool.query<{ count: string }>(
      `SELECT count(*) FROM transactions
       WHERE status = 'pending' AND (account_id = $1 OR counterparty_account_id = $1)`,
      [accountId],
    );
    if (Number(rows[0]?.count ?? 0) === 0 || Date.now() > deadline) return;
    await sleep(100);
  }
}

/**
 * Deletion races: a new user deletes themself while deposits are confirmed and a sponsor's transfers land; if
 * refused, they empty the account through a payout and try again while more transfers arrive.
 */
export async function runDeletionRacer(arena: Arena, party: Party, sponsor: Member) {
  const sponsorAccount = sponsor.accounts[0] as PartyAccount;
  while (Date.now() < arena.until) {
    const funds = await balanceOf(arena, sponsor, sponsorAccount);
    if (!funds || funds.available < 3_000n)
      await fund(arena, party, sponsor, [{ account: sponsorAccount, minor: 20_000n }]);
    const leaver = await openMember(arena, party, ['USD']);
    count(arena, 'deletion races: rounds');
    const first = await raceDeletion(arena, party, sponsor, leaver, 3, 3);
    if (first.deleted) {
      count(arena, 'deletion races: deleted before any money landed');
      continue;
    }
    const account = leaver.accounts[0] as PartyAccount;
    await emptyAccount(arena, party, leaver, account);
    const second = await raceDeletion(arena, party, sponsor, leaver, 0, 2);
    if (second.deleted) {
      count(arena, 'deletion races: deleted after emptying');
      continue;
    }
    count(arena, 'deletion races: kept (money landed first)');
    // The money won both races: empty the account once more and leave with nothing in flight, so every round
    // ends with a deletion the books must account for (the races alone may lose every time in a short run).
    await emptyAccount(arena, party, leaver, account);
    const last = await raceDeletion(arena, party, sponsor, leaver, 0, 0);
    count(
      arena,
      last.deleted ? 'deletion races: deleted unraced' : 'deletion races: kept after emptying twice',
    );
  }
}

/**
 * A customer who deposits twice, is paid out everything and deletes themself: the platform refunds their deposits
 * afterwards (refundDeletedDeposits), when nobody is left to take the money back from.
 */
export async function runRefundedLeaver(arena: Arena, party: Party) {
  const leaver = await openMember(arena, party, ['USD']);
  const account = leaver.accounts[0] as PartyAccount;
  await fund(arena, party, leaver, [
    { account, minor: 3_000n },
    { account, minor: 2_000n },
  ]);
  await emptyAccount(arena, party, leaver, account);
  // Raw: the deletion as the other attacks make it, its answer tallied.
  const deletion = await call(arena, 'DELETE', `/user/${leaver.userId}?confirm=true`, leaver.token);
  if (deletion.status === 204) {
    arena.deleted.push({ userId: leaver.userId, accountIds: leaver.accounts.map((a) => a.id) });
    count(arena, 'refunded leavers: deleted after being paid out');
  } else count(arena, `refunded leavers: deletion answered ${deletion.status}`);
}

/** Waits until nothing is pending on the account, then pays out what it holds. */
async function emptyAccount(arena: Arena, party: Party, member: Member, account: PartyAccount) {
  await untilQuiet(arena, account.id);
  const held = await balanceOf(arena, member, account);
  if (held && held.available > 0n)
    await withdrawPromptly(arena, party, member, account, held.available, 'deletion races: emptying payouts');
}
