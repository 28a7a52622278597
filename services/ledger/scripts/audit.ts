import { createLogger, loadConfig, openDatabase } from '@payments/service-kit';
import { LedgerConfigSchema } from '../src/config.js';
import { runAudit } from '../src/data/audit.js';
import { migrations } from '../src/data/migrations.js';
import { renderAudit } from '../src/http/presenters.js';

// Checks the ledger's books (DATABASE_URL) and prints the report; exits 1 when they do not add up.
const config = loadConfig(LedgerConfigSchema);
const knex = await openDatabase({
  url: config.DATABASE_URL,
  migrations,
  logger: createLogger('ledger-audit', 'warn'),
  // Without the service's statement timeout: the audit scans every entry, which at scale takes minutes.
  pool: { max: 6, applicationName: 'ledger-audit' },
});
try {
  const report = await runAudit(knex);
  console.log(JSON.stringify(renderAudit(report), null, 2));
  process.exitCode = report.ok ? 0 : 1;
} finally {
  await knex.destroy();
}
