import { testServiceToken } from './system.js';

export interface AuditReport {
  ok: boolean;
  system_balances: { code: string; currency: string; balance: string }[];
  [check: string]: unknown;
}

/**
 * The ledger's own check of its books, read directly from the service (the gateway never routes /internal) with
 * the service credential every test system of this process runs with.
 */
export async function auditOf(ledgerUrl: string): Promise<AuditReport> {
  const response = await fetch(`${ledgerUrl}/internal/audit`, {
    headers: { authorization: `Bearer ${testServiceToken}` },
  });
  if (response.status !== 200) throw new Error(`the ledger's audit answered ${response.status}`);
  return (await response.json()) as AuditReport;
}

/** The audit, failing the test with the whole report unless the books balance. */
export async function expectBooksBalance(ledgerUrl: string): Promise<AuditReport> {
  const report = await auditOf(ledgerUrl);
  if (!report.ok) throw new Error(`the ledger's books do not balance: ${JSON.stringify(report, null, 2)}`);
  return report;
}

/** A system account's balance in minor units (fee revenue, provider clearing, fx), 0 when it has none yet. */
export function systemBalance(report: AuditReport, code: string, currency: string): bigint {
  const account = report.system_balances.find((a) => a.code === code && a.currency === currency);
  return BigInt(account?.balance ?? 0);
}
