import { expect } from 'chai';
import { testServiceToken } from '@payments/testkit';
import { rawApi } from './api.js';

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
  const response = await rawApi(ledgerUrl).get('/internal/audit', testServiceToken);
  expect(response.status).to.equal(200);
  return response.body as AuditReport;
}

export async function expectBooksBalance(ledgerUrl: string): Promise<AuditReport> {
  const report = await auditOf(ledgerUrl);
  expect(report.ok, JSON.stringify(report, null, 2)).to.equal(true);
  return report;
}

/** A system account's balance in minor units (fee revenue, provider clearing, fx), 0 when it has none yet. */
export function systemBalance(report: AuditReport, code: string, currency: string): bigint {
  const account = report.system_balances.find((a) => a.code === code && a.currency === currency);
  return BigInt(account?.balance ?? 0);
}
