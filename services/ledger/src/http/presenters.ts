import {
  formatMinor,
  minorToNumber,
  STATEMENT_CSV_COLUMNS,
  versionAtLeast,
  type ApiVersion,
} from '@payments/contracts';
import { declineRateOf, failureRateOf, totalsOf, type ActivityBucket } from '../domain/overview.js';
import { lossAmountOf, type PlatformLoss } from '../domain/platform-loss.js';
import { withRunningBalance, type StatementPeriod } from '../domain/statement.js';
import type { Account, Transaction } from '../domain/transaction.js';
import type { AdminAction } from '../use-cases/admin-actions.js';
import type { ChargebackExposureReport } from '../use-cases/chargeback-exposure.js';
import type { Overview } from '../use-cases/overview.js';
import type { AuditReport } from '../use-cases/maintenance.js';
import type { ProviderPayment } from '../use-cases/provider-requests.js';
import type { ReconciliationCaseRecord, UnconfirmedWithdrawal } from '../use-cases/reconciliation.js';
import type { LossTotal, OverdrawnTotal } from '../use-cases/reversals.js';
import type { StatementSlice } from '../use-cases/statements.js';

/** Exponent by currency code, for turning minor units into JSON numbers at the edge. */
export type Exponents = ReadonlyMap<string, number>;

export function exponentIn(exponents: Exponents, currency: string): number {
  const exponent = exponents.get(currency);
  if (exponent === undefined) throw new Error(`no exponent known for ${currency}`);
  return exponent;
}

export function renderAccount(account: Account, exponent: number) {
  return {
    id: account.id,
    user_id: account.userId,
    currency: account.currency,
    balance: minorToNumber(account.balance, exponent),
    available_balance: minorToNumber(account.availableBalance, exponent),
    metadata: account.metadata,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

export function renderBalance(account: Account, exponent: number) {
  return {
    account_id: account.id,
    balance: minorToNumber(account.balance, exponent),
    currency: account.currency,
    available_balance: minorToNumber(account.availableBalance, exponent),
  };
}

export function renderPastBalance(account: Account, balance: bigint, at: Date, exponent: number) {
  return {
    account_id: account.id,
    balance: minorToNumber(balance, exponent),
    currency: account.currency,
    at: at.toISOString(),
  };
}

export function renderStatement(
  account: Account,
  period: StatementPeriod,
  slice: StatementSlice,
  exponent: number,
) {
  return {
    account_id: account.id,
    currency: account.currency,
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    opening_balance: minorToNumber(slice.opening, exponent),
    closing_balance: minorToNumber(slice.closing, exponent),
    entries: withRunningBalance(slice.pageStart, slice.entries).map((line) => ({
      id: line.id,
      transaction_id: line.transactionId,
      type: line.type,
      counterparty_account_id: line.counterpartyAccountId,
      amount: minorToNumber(line.amount, exponent),
      balance: minorToNumber(line.balance, exponent),
      created_at: line.createdAt.toISOString(),
      ...(line.own && { reference: line.own.reference, metadata: line.own.metadata }),
    })),
    has_more: slice.hasMore,
  };
}

const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
/**
 * A cell of the user's own text that a spreadsheet would run as a formula (first character =, +, -, @, a tab or a
 * carriage return: `=HYPERLINK(…)` in a reference) is kept as text by a `'` before it, as OWASP advises for CSV
 * exports; whoever opens the statement (its owner, an administrator) runs nothing.
 */
const spreadsheetText = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
const toCsv = (rows: readonly string[][]) => rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');

/**
 * RFC 4180 text: a header row, then an opening_balance row on the first page, one row per entry, and a
 * closing_balance row on the last page, so the pages of a period concatenate (without their headers) into one
 * file. Amounts are exact decimal strings with the currency's own number of decimals.
 */
export function renderStatementCsv(
  account: Account,
  period: StatementPeriod,
  slice: StatementSlice,
  exponent: number,
  firstPage: boolean,
): string {
  const amount = (minor: bigint) => formatMinor(minor, exponent);
  const rows: string[][] = [[...STATEMENT_CSV_COLUMNS]];
  const edge = (at: Date, type: string, balance: bigint) =>
    rows.push([at.toISOString(), '', '', type, '', '', amount(balance), account.currency, '', '']);
  if (firstPage) edge(period.from, 'opening_balance', slice.opening);
  for (const line of withRunningBalance(slice.pageStart, slice.entries)) {
    rows.push([
      line.createdAt.toISOString(),
      line.id,
      line.transactionId,
      line.type ?? '',
      line.counterpartyAccountId ?? '',
      amount(line.amount),
      amount(line.balance),
      account.currency,
      spreadsheetText(line.own?.reference ?? ''),
      // Metadata as one JSON field; empty where there is none, or it is not the owner's.
      line.own && Object.keys(line.own.metadata).length > 0 ? JSON.stringify(line.own.metadata) : '',
    ]);
  }
  if (!slice.hasMore) edge(period.to, 'closing_balance', slice.closing);
  return toCsv(rows);
}

/**
 * v1.0 fields, plus `fee` from v1.1 and, for cross-currency transfers, the rate and the converted amount. The
 * owner's `metadata` and `reference` only where `owned` (the viewer is the owner, or an admin): never to the other
 * side of a transfer.
 */
export function renderTransaction(
  transaction: Transaction,
  exponents: Exponents,
  version: ApiVersion,
  owned: boolean,
) {
  const exponent = exponentIn(exponents, transaction.currency);
  const body = {
    id: transaction.id,
    account_id: transaction.accountId,
    type: transaction.type,
    status: transaction.status,
    amount: minorToNumber(transaction.amount, exponent),
    currency: transaction.currency,
    counterparty_account_id: transaction.counterpartyAccountId,
    payment_id: transaction.paymentId,
    failure_reason: transaction.failureReason,
    created_at: transaction.createdAt.toISOString(),
    updated_at: transaction.updatedAt.toISOString(),
    completed_at: transaction.completedAt?.toISOString() ?? null,
    ...(transaction.type === 'reversal' && {
      original_transaction_id: transaction.originalTransactionId,
      reversal_reason: transaction.reversalReason,
    }),
    ...(transaction.type === 'reversal' &&
      transaction.reversalReason === 'refund' && { refund_reason: transaction.refundReason ?? null }),
    ...(owned && { metadata: transaction.metadata, reference: transaction.reference }),
  };
  if (!versionAtLeast(version, '1.1')) return body;
  const conversion =
    transaction.convertedAmount !== null && transaction.convertedCurrency !== null
      ? {
          exchange_rate: Number(transaction.exchangeRate),
          converted_amount: minorToNumber(
            transaction.convertedAmount,
            exponentIn(exponents, transaction.convertedCurrency),
          ),
        }
      : {};
  return { ...body, fee: minorToNumber(transaction.fee, exponent), ...conversion };
}

/**
 * What the provider made for a transaction, once it made it. The client secret lets whoever holds it pay, so it is
 * shown only to the owner (not an admin, never in a log line), and only while there is something to pay; with it,
 * the page to pay on (`paymentPageBase`, ADR 0128), where there is one.
 */
export function renderProviderPayment(
  payment: ProviderPayment,
  showSecret: boolean,
  paymentPageBase: string | null,
) {
  if (payment.reference === null) return null;
  const payable = showSecret && payment.clientSecret !== null;
  return {
    provider: payment.provider,
    reference: payment.reference,
    ...(payable && { client_secret: payment.clientSecret }),
    ...(payable &&
      paymentPageBase !== null && {
        payment_url: `${paymentPageBase}/pay/${encodeURIComponent(payment.transactionId)}`,
      }),
  };
}

export function renderPagination(limit: number, offset: number, total: number) {
  return { limit, offset, total };
}

export function renderUnconfirmedWithdrawal(
  found: UnconfirmedWithdrawal,
  exponents: Exponents,
  version: ApiVersion,
) {
  return {
    kind: 'unconfirmed_withdrawal' as const,
    ...renderTransaction(found.transaction, exponents, version, true),
    user_id: found.transaction.userId,
    reconciliation_required_at: found.flaggedAt.toISOString(),
  };
}

export function renderMismatchCase(found: ReconciliationCaseRecord, exponent: number) {
  return {
    kind: found.kind,
    id: found.id,
    status: found.status,
    provider_reference: found.reference,
    transaction_id: found.transactionId,
    currency: found.currency,
    provider_amount: minorToNumber(found.providerAmount, exponent),
    ledger_amount: minorToNumber(found.ledgerAmount, exponent),
    found_at: found.foundAt.toISOString(),
    last_seen_at: found.lastSeenAt.toISOString(),
    ...(found.decision && { decision: found.decision }),
    ...(found.reason !== null && { reason: found.reason }),
    ...(found.resolvedBy !== null && { resolved_by: found.resolvedBy }),
    ...(found.resolvedAt !== null && { resolved_at: found.resolvedAt.toISOString() }),
  };
}

export const RECONCILIATION_CSV_COLUMNS = [
  'kind',
  'case_id',
  'status',
  'transaction_id',
  'provider_reference',
  'currency',
  'provider_amount',
  'ledger_amount',
  'found_at',
] as const;

/** The reconciliation report: what waits for an operator, one RFC 4180 row each, amounts as exact decimals. */
export function renderReconciliationCsv(
  withdrawals: readonly UnconfirmedWithdrawal[],
  cases: readonly ReconciliationCaseRecord[],
  exponents: Exponents,
): string {
  const amount = (minor: bigint, currency: string) => formatMinor(minor, exponentIn(exponents, currency));
  const rows: string[][] = [[...RECONCILIATION_CSV_COLUMNS]];
  for (const { transaction, flaggedAt } of withdrawals) {
    const held = amount(transaction.amount, transaction.currency);
    rows.push([
      'unconfirmed_withdrawal',
      '',
      'open',
      transaction.id,
      transaction.paymentId ?? '',
      transaction.currency,
      '',
      held,
      flaggedAt.toISOString(),
    ]);
  }
  for (const found of cases) {
    rows.push([
      found.kind,
      found.id,
      found.status,
      found.transactionId ?? '',
      found.reference,
      found.currency,
      amount(found.providerAmount, found.currency),
      amount(found.ledgerAmount, found.currency),
      found.foundAt.toISOString(),
    ]);
  }
  return toCsv(rows);
}

export function renderAdminAction(action: AdminAction) {
  return {
    id: action.id,
    actor: action.actor,
    action: action.action,
    subject: action.subject,
    owner: action.owner,
    reason: action.reason,
    detail: action.detail,
    created_at: action.createdAt.toISOString(),
  };
}

/** An account a reversal took below zero: what it holds, and by how much it is short. */
export function renderOverdrawnAccount(account: Account, exponent: number) {
  return {
    ...renderAccount(account, exponent),
    overdrawn_by: minorToNumber(-account.availableBalance, exponent),
  };
}

/** A refund or lost dispute of a removed user's deposit, booked as the platform's loss. */
export function renderPlatformLoss(loss: PlatformLoss, exponent: number) {
  return {
    id: loss.id,
    deposit_id: loss.depositId,
    reason: loss.reason,
    currency: loss.currency,
    amount: minorToNumber(loss.amount, exponent),
    fee: minorToNumber(loss.fee, exponent),
    loss: minorToNumber(lossAmountOf(loss), exponent),
    provider_reference: loss.reference,
    booked_at: loss.createdAt.toISOString(),
  };
}

/**
 * Per currency, side by side: what live users owe back (their accounts overdrawn by reversals, made up by their
 * next deposits) and what the platform lost for good (removed users' deposits taken back by the provider).
 */
export function renderExposure(
  overdrawn: readonly OverdrawnTotal[],
  losses: readonly LossTotal[],
  exponents: Exponents,
) {
  const currencies = [...new Set([...overdrawn, ...losses].map((total) => total.currency))].sort();
  return currencies.map((currency) => {
    const exponent = exponentIn(exponents, currency);
    const owed = overdrawn.find((total) => total.currency === currency);
    const lost = losses.find((total) => total.currency === currency);
    return {
      currency,
      overdrawn_accounts: owed?.accounts ?? 0,
      overdrawn_total: minorToNumber(owed?.overdrawnBy ?? 0n, exponent),
      losses: lost?.count ?? 0,
      losses_total: minorToNumber(lost ? lossAmountOf(lost) : 0n, exponent),
    };
  });
}

/** Internal: the amount in minor units, as events carry it. */
export function renderPayment(transaction: Transaction) {
  return {
    transaction_id: transaction.id,
    type: transaction.type,
    status: transaction.status,
    amount: Number(transaction.amount),
    currency: transaction.currency,
  };
}

/** Internal: amounts stay in minor units, as strings. */
export function renderAudit(report: AuditReport) {
  const minor = (value: bigint) => value.toString();
  return {
    ok: report.ok,
    checked_at: report.checkedAt.toISOString(),
    counts: report.counts,
    system_balances: report.systemBalances.map((a) => ({
      code: a.code,
      currency: a.currency,
      balance: minor(a.balance),
    })),
    unbalanced_transactions: report.unbalancedTransactions.map((t) => ({
      transaction_id: t.transactionId,
      currency: t.currency,
      sum: minor(t.sum),
    })),
    balance_mismatches: report.balanceMismatches.map((a) => ({
      account_id: a.accountId,
      balance: minor(a.balance),
      entries: minor(a.entries),
    })),
    invalid_balances: report.invalidBalances.map((a) => ({
      account_id: a.accountId,
      balance: minor(a.balance),
      available_balance: minor(a.availableBalance),
    })),
    hold_mismatches: report.holdMismatches.map((a) => ({
      account_id: a.accountId,
      held: minor(a.held),
      pending: minor(a.pending),
    })),
    misbooked_transactions: report.misbookedTransactions.map((t) => ({
      transaction_id: t.transactionId,
      status: t.status,
      entries: t.entries,
    })),
    overdrawn_accounts: report.overdrawnAccounts.map((a) => ({
      account_id: a.accountId,
      balance: minor(a.balance),
      available_balance: minor(a.availableBalance),
    })),
    history_count_mismatches: report.historyCountMismatches.map((h) => ({
      owner_kind: h.ownerKind,
      owner_id: h.ownerId,
      direction: h.direction,
      type: h.type,
      status: h.status,
      counted: h.counted,
      actual: h.actual,
    })),
    platform_losses: report.platformLosses.map((l) => ({
      currency: l.currency,
      count: l.count,
      amount: minor(l.amount),
      loss: minor(l.loss),
    })),
    misbooked_losses: report.misbookedLosses.map((l) => ({
      transaction_id: l.transactionId,
      expected: minor(l.expected),
      entries: minor(l.entries),
    })),
  };
}

/** A bucket's (or the window's) activity: counts per movement type, and the failure and decline rates. */
function renderActivity(activity: Omit<ActivityBucket, 'start'>) {
  const { movements, cardDeclines, cardPayments } = activity;
  return {
    deposits: movements.deposit,
    withdrawals: movements.withdrawal,
    transfers: movements.transfer,
    failure_rate: failureRateOf(movements),
    card_attempts: cardDeclines + cardPayments,
    card_declines: cardDeclines,
    decline_rate: declineRateOf(cardDeclines, cardPayments),
  };
}

export function renderOverview(overview: Overview, generatedAt: Date) {
  const { reconciliation, providerRequests, series } = overview;
  return {
    window: overview.window,
    bucket_seconds: overview.bucketSeconds,
    from: overview.from?.toISOString() ?? null,
    to: overview.to?.toISOString() ?? null,
    series:
      series?.map((bucket) => ({ start: bucket.start.toISOString(), ...renderActivity(bucket) })) ?? null,
    totals: series ? renderActivity(totalsOf(series)) : null,
    reconciliation: reconciliation && {
      unconfirmed_withdrawals: reconciliation.unconfirmedWithdrawals,
      open_cases: [...reconciliation.openCases.values()].reduce((sum, count) => sum + count, 0),
      open_cases_by_kind: Object.fromEntries(reconciliation.openCases),
    },
    provider_requests: providerRequests && {
      waiting: providerRequests.waiting,
      oldest_seconds: providerRequests.oldestSeconds,
    },
    dead_letters: overview.deadLetters,
    queues: overview.queues,
    outbox: overview.outbox.map((outbox) => ({
      service: outbox.service,
      oldest_unpublished_seconds: outbox.oldestUnpublishedSeconds,
    })),
    webhook_deliveries_pending: overview.webhookDeliveriesPending,
    missing: overview.missing,
    generated_at: generatedAt.toISOString(),
  };
}

/** Exact minor units, turned into the currency's units only here. */
export function renderChargebackExposure(report: ChargebackExposureReport, exponents: Exponents) {
  const amount = (value: bigint, currency: string) => minorToNumber(value, exponentIn(exponents, currency));
  return {
    window_days: report.windowDays,
    since: report.since.toISOString(),
    by_currency: report.totals.map((total) => ({
      currency: total.currency,
      exposure: amount(total.exposure, total.currency),
      exposed_users: total.exposedUsers,
      deposits_in_window: amount(total.deposits, total.currency),
    })),
    data: report.users.map((user) => ({
      user_id: user.userId,
      currency: user.currency,
      exposure: amount(user.exposure, user.currency),
      deposits_in_window: amount(user.deposits, user.currency),
      balance: amount(user.balance, user.currency),
    })),
    has_more: report.hasMore,
  };
}
