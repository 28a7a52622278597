import type { Argv } from 'yargs';
import type { StatusChangeRequest } from '@payments/client';
import { USER_STATUSES } from '@payments/contracts/enums';
import type { CommandContext, GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { idArgument } from '../id-argument.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from '../paging.js';
import { OPTIONAL_REASON, optionalReason } from './admin-options.js';

type UserStatus = StatusChangeRequest['status'];

/** The arguments of a change of a user's status: whose, and why. */
const userAndReason =
  (example: string) =>
  <T>(y: Argv<T>) =>
    idArgument('user-id', 'User id', example)(y).option('reason', OPTIONAL_REASON);

export function adminUserCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  const setStatus =
    (status: UserStatus, done: string) =>
    async (ctx: CommandContext, argv: { userId: string; reason?: string }) => {
      const body = await ctx.api.admin.users.setStatus(argv.userId, {
        status,
        ...optionalReason(argv.reason),
      });
      if (ctx.out.json) return ctx.out.data(body);
      ctx.out.line(`User ${body.username} (${body.id}) ${done}.`);
    };
  return admin.command('users', 'Find users, and disable or enable them', (users) =>
    users
      .command(
        'find',
        'Users by exact username or e-mail, the start of either, or status (all when none is given)',
        (y) =>
          pageOptions(y)
            .option('username', { type: 'string', describe: 'Exactly this username, any case' })
            .option('email', { type: 'string', describe: 'Exactly this e-mail address, any case' })
            .option('query', {
              alias: 'q',
              type: 'string',
              describe: 'The start of a username or an e-mail address, any case',
            })
            .option('status', {
              type: 'string',
              choices: USER_STATUSES,
              describe: 'Only users with this status',
            })
            .example('$0 admin users find --query ali', 'alice, alina@example.com, …')
            .example('$0 admin users find --status locked', ''),
        run(
          async (
            ctx,
            argv: PageArgs & { username?: string; email?: string; query?: string; status?: UserStatus },
          ) => {
            const body = await ctx.api.admin.users.findPage({
              username: argv.username,
              email: argv.email,
              q: argv.query,
              status: argv.status,
              ...pageQuery(argv),
            });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.table(
              ['ID', 'USERNAME', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'],
              body.data.map((u) => [u.id, u.username, u.email, u.role, u.status, u.created_at]),
            );
            paginationNote(ctx, body, argv);
          },
        ),
      )
      .command(
        'disable <user-id>',
        'Disable a user: their tokens are revoked at once and their logins refused',
        userAndReason('$0 admin users disable 6801acf0… --reason "chargeback ring, ticket 77"'),
        run(setStatus('disabled', 'is disabled; their tokens are revoked')),
      )
      .command(
        'enable <user-id>',
        'Make a disabled or locked user active again',
        userAndReason('$0 admin users enable 6801acf0…'),
        run(setStatus('active', 'is active')),
      )
      .demandCommand(1, 'Say what to do with users: find, disable or enable.'),
  );
}
