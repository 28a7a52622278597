import type { Argv } from 'yargs';
import type { GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from '../paging.js';

/** The trail of what admins did: who, when, what, whose and why. */
export function adminActionCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return admin.command(
    'actions',
    'The append-only trail of what admins did, to whose resources, and why',
    (y) =>
      pageOptions(y)
        .option('actor', { type: 'string', describe: "Only this admin's actions (user id)" })
        .option('owner', { type: 'string', describe: "Only actions on this user's resources (user id)" })
        .example('$0 admin actions --limit 50', '')
        .example('$0 admin actions --owner 6801acf0…', 'What admins did to one user'),
    run(async (ctx, argv: PageArgs & { actor?: string; owner?: string }) => {
      const body = await ctx.api.admin.actions.listPage({
        ...pageQuery(argv),
        actor: argv.actor,
        owner: argv.owner,
      });
      if (ctx.out.json) return ctx.out.data(body);
      ctx.out.table(
        ['ID', 'WHEN', 'ACTOR', 'ACTION', 'SUBJECT', 'OWNER', 'REASON'],
        body.data.map((a) => [
          a.id,
          a.created_at,
          a.actor,
          a.action,
          a.subject,
          a.owner ?? '(platform)',
          a.reason ?? '',
        ]),
      );
      paginationNote(ctx, body, argv);
    }),
  );
}
