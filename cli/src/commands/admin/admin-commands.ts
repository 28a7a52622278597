import type { Argv } from 'yargs';
import type { GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { adminActionCommands } from './action-commands.js';
import { deadLetterCommands } from './dead-letter-commands.js';
import { adminDeliveryCommands } from './delivery-commands.js';
import { overdrawnCommands } from './overdrawn-commands.js';
import { reconciliationCommands } from './reconciliation-commands.js';
import { adminUserCommands } from './user-commands.js';

/** Each group of the admin commands, in the order help lists them. */
const GROUPS = [
  reconciliationCommands,
  adminUserCommands,
  deadLetterCommands,
  adminActionCommands,
  overdrawnCommands,
  adminDeliveryCommands,
];

/** Operators' views and decisions; the API answers them only for an admin's login (403 otherwise). */
export function adminCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('admin', "Operators' commands (an admin's login)", (admin) =>
    GROUPS.reduce((commands, group) => group(commands, run), admin).demandCommand(
      1,
      'Say what to do: users, reconciliation, actions, overdrawn, deliveries or dead-letters.',
    ),
  );
}
