import type { Argv } from 'yargs';
import type { ApiKey, ApiKeyScope } from '@payments/client';
import { API_KEY_SCOPES } from '@payments/contracts/enums';
import type { GlobalArgs } from '../context.js';
import { usageError } from '../exit-codes.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from './paging.js';
import type { Run } from './run.js';

function describeKey(key: ApiKey): [string, string][] {
  return [
    ['API key', key.id],
    ['Name', key.name],
    ['Type', key.type],
    ['Key', `${key.prefix}…${key.last4}`],
    ['Scopes', key.scopes?.join(', ') ?? 'all (secret key)'],
    ['Expires', key.expires_at ?? 'never'],
    ['Last used', key.last_used_at ?? 'never'],
    ['Created', key.created_at],
  ];
}

function checkScopes(scopes: readonly string[] | undefined): ApiKeyScope[] | undefined {
  if (!scopes || scopes.length === 0) return undefined;
  const known: readonly string[] = API_KEY_SCOPES;
  const unknown = scopes.filter((scope) => !known.includes(scope));
  if (unknown.length > 0) {
    throw usageError(`Unknown scope ${unknown.join(', ')}; one of: ${API_KEY_SCOPES.join(', ')}.`);
  }
  return [...new Set(scopes as ApiKeyScope[])];
}

export function apiKeyCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('api-keys', 'Manage your API keys for servers', (keys) =>
    keys
      .command(
        'create <name>',
        'Create a key; prints its secret once',
        (y) =>
          y
            .positional('name', { type: 'string', demandOption: true, describe: 'What the key is for' })
            .option('scope', {
              type: 'string',
              array: true,
              describe: `Restrict the key, repeatable: ${API_KEY_SCOPES.join(', ')} (none: a secret key)`,
            })
            .option('expires-at', { type: 'string', describe: 'When it stops working (ISO 8601)' })
            .example('$0 api-keys create "billing server" --scope read --scope money', ''),
        run(async (ctx, argv: { name: string; scope?: string[]; 'expires-at'?: string }) => {
          const scopes = checkScopes(argv.scope);
          const key = await ctx.api.apiKeys.create({
            name: argv.name,
            ...(scopes && { scopes }),
            ...(argv['expires-at'] !== undefined && { expires_at: argv['expires-at'] }),
          });
          if (ctx.out.json) return ctx.out.data(key);
          ctx.out.fields([...describeKey(key), ['Secret', key.secret]]);
          ctx.out.note('Store the secret now: it is not shown again.', 'warning');
        }),
      )
      .command(
        'list',
        'List your keys (never their secrets)',
        (y) => pageOptions(y),
        run(async (ctx, argv: PageArgs) => {
          const body = await ctx.api.apiKeys.listPage(pageQuery(argv));
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.table(
            ['ID', 'NAME', 'KEY', 'SCOPES', 'EXPIRES', 'LAST USED'],
            body.data.map((k) => [
              k.id,
              k.name,
              `${k.prefix}…${k.last4}`,
              k.scopes?.join(',') ?? 'all',
              k.expires_at ?? 'never',
              k.last_used_at ?? 'never',
            ]),
          );
          paginationNote(ctx, body, argv);
        }),
      )
      .command(
        'revoke <id>',
        'Revoke a key, everywhere and at once',
        (y) => y.positional('id', { type: 'string', demandOption: true }),
        run(async (ctx, argv: { id: string }) => {
          await ctx.api.apiKeys.revoke(argv.id);
          if (ctx.out.json) return ctx.out.data({ id: argv.id, revoked: true });
          ctx.out.line(`Revoked API key ${argv.id}.`);
        }),
      )
      .demandCommand(1, 'Say what to do with API keys: create, list or revoke.'),
  );
}
