import type { Argv } from 'yargs';
import { WEBHOOK_DELIVERY_STATUSES } from '@payments/contracts/enums';
import type { GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { printDeliveryLog, type DeliveryLogQuery } from '../webhook-commands.js';
import { pageOptions } from '../paging.js';

/** Any user's webhook deliveries, as their owner sees them. */
export function adminDeliveryCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return admin.command(
    'deliveries <endpoint-id>',
    "The delivery log of any user's webhook endpoint: status, attempts, last answer, next retry",
    (y) =>
      pageOptions(y)
        .positional('endpoint-id', { type: 'string', demandOption: true, describe: 'Endpoint id' })
        .option('status', { type: 'string', choices: WEBHOOK_DELIVERY_STATUSES })
        .example('$0 admin deliveries 653b6d43… --status failed', ''),
    run(async (ctx, argv: DeliveryLogQuery & { endpointId: string }) =>
      printDeliveryLog(ctx, argv.endpointId, argv),
    ),
  );
}
