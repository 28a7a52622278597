import type { Argv } from 'yargs';
import type { UserUpdateRequest } from '@payments/client';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { canPrompt, obtainPassword, promptLine } from '../prompt.js';
import { tokenSubject } from './auth-commands.js';
import type { Run } from './run.js';

async function currentUserId(ctx: CommandContext): Promise<string> {
  const session = await ctx.state.readSession();
  const userId = session ? (session.user_id ?? tokenSubject(session.token)) : undefined;
  if (!userId) throw new CliError(EXIT.auth, 'You are not logged in.', ['Log in with: payments login']);
  return userId;
}

export function userCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('user', 'Change or delete your user', (user) =>
    user
      .command(
        'update',
        'Change your user name, e-mail or password',
        (y) =>
          y
            .option('username', { type: 'string' })
            .option('email', { type: 'string' })
            .option('change-password', {
              type: 'boolean',
              default: false,
              describe: 'Asks for the new password (or reads PAYMENTS_NEW_PASSWORD)',
            })
            .example('$0 user update --email new@example.com', 'asks for your current password')
            .epilogue(
              'Changing the e-mail or the password needs your current password: asked without echo, ' +
                'or read from PAYMENTS_PASSWORD.',
            ),
        run(async (ctx, argv: { username?: string; email?: string; 'change-password': boolean }) => {
          const changes: UserUpdateRequest = {};
          if (argv.username) changes.username = argv.username;
          if (argv.email) changes.email = argv.email;
          if (argv['change-password']) {
            changes.password = await obtainPassword(
              undefined,
              { PAYMENTS_PASSWORD: ctx.env.PAYMENTS_NEW_PASSWORD },
              {
                confirm: true,
              },
            );
          }
          if (Object.keys(changes).length === 0)
            throw usageError('Nothing to change: give --username, --email or --change-password.');
          // Asked last, so a typo in the new password is caught before the current one is asked for.
          if (changes.email !== undefined || changes.password !== undefined) {
            changes.current_password = await obtainPassword(undefined, ctx.env, {
              question: 'Current password: ',
            });
          }
          const userId = await currentUserId(ctx);
          const body = await ctx.api.users.update(userId, changes);
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.line(`Updated ${body.username} <${body.email}>.`);
        }),
      )
      .command(
        'delete',
        'Delete your user with all its accounts and transactions',
        (y) =>
          y
            .option('yes', { type: 'boolean', default: false, describe: 'Do not ask for confirmation' })
            .example('$0 user delete', 'asks you to type "delete"'),
        run(async (ctx, argv: { yes: boolean }) => {
          const userId = await currentUserId(ctx);
          if (!argv.yes) {
            if (!canPrompt()) throw usageError('Deleting a user needs confirmation: pass --yes.');
            const answer = await promptLine(
              'This deletes your user, accounts and history. Type "delete" to go on: ',
            );
            if (answer !== 'delete') throw usageError('Not deleted.');
          }
          await ctx.api.users.delete(userId, { confirm: true });
          await ctx.state.clearSession();
          if (ctx.out.json) return ctx.out.data({ deleted: userId });
          ctx.out.line(`Deleted user ${userId}.`);
        }),
      )
      .demandCommand(1, 'Say what to do: update or delete.'),
  );
}
