import { LedgerConfigSchema, startLedger } from '@payments/ledger';
import { loadConfig, runMain } from '@payments/service-kit';

/**
 * A ledger process with a fault the crash test passes in: it kills itself right after committing the payment
 * confirmation of the transaction named by its first argument, before acknowledging the event.
 */
const target = process.argv[2];
runMain('ledger', async () =>
  startLedger(loadConfig(LedgerConfigSchema), {
    afterConfirmationCommit: (transactionId) => {
      if (transactionId === target) process.kill(process.pid, 'SIGKILL');
    },
  }),
);
