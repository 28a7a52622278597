import type { Argv } from 'yargs';
import type { GlobalArgs } from '../context.js';
import { usageError } from '../exit-codes.js';
import { createStateStore, listProfiles, SETTING_KEYS, type Settings } from '../state-store.js';
import type { Run } from './run.js';

type SettingKey = (typeof SETTING_KEYS)[number];

function checkSetting(key: SettingKey, value: string): Settings[SettingKey] {
  if (key === 'output') {
    if (value !== 'text' && value !== 'json') throw usageError('output is text or json.');
    return value;
  }
  try {
    new URL(value);
  } catch {
    throw usageError(`api-url must be a URL such as http://127.0.0.1:8080, got "${value}".`);
  }
  return value;
}

export function configCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('config', 'Read and change CLI settings', (config) =>
    config
      .command(
        'set <key> <value>',
        'Change a setting (api-url, output)',
        (y) =>
          y
            .positional('key', { type: 'string', choices: SETTING_KEYS, demandOption: true })
            .positional('value', { type: 'string', demandOption: true })
            .example('$0 config set api-url http://payments.example:8080', '')
            .example('$0 config set output json', 'every command prints JSON'),
        run(async (ctx, argv: { key: SettingKey; value: string }) => {
          const settings = await ctx.state.readSettings();
          await ctx.state.writeSettings({ ...settings, [argv.key]: checkSetting(argv.key, argv.value) });
          if (ctx.out.json) return ctx.out.data({ [argv.key]: argv.value });
          ctx.out.line(`${argv.key} = ${argv.value}`);
        }),
      )
      .command(
        'get [key]',
        'Show settings',
        (y) =>
          y.positional('key', { type: 'string', choices: SETTING_KEYS }).example('$0 config get api-url', ''),
        run(async (ctx, argv: { key?: SettingKey }) => {
          const settings = await ctx.state.readSettings();
          const effective: Record<string, string> = {
            profile: ctx.state.profile,
            'api-url': ctx.baseUrl,
            output: ctx.out.json ? 'json' : 'text',
          };
          const shown = argv.key ? { [argv.key]: effective[argv.key] } : effective;
          if (ctx.out.json) return ctx.out.data({ ...shown, file: settings });
          for (const [key, value] of Object.entries(shown)) ctx.out.line(`${key} = ${value}`);
        }),
      )
      .command(
        'profiles',
        'List the profiles: each environment with its API URL and who is logged in',
        (y) =>
          y
            .example(
              '$0 --profile staging config set api-url https://staging.payments.example',
              'a new profile',
            )
            .example('$0 config profiles', ''),
        run(async (ctx) => {
          const rows = [];
          for (const profile of await listProfiles(ctx.env)) {
            const state = createStateStore(ctx.env, profile);
            const [settings, session] = await Promise.all([state.readSettings(), state.readSession()]);
            const expired = session !== null && session.expires_at <= Math.floor(Date.now() / 1000);
            rows.push({
              profile,
              current: profile === ctx.state.profile,
              api_url: settings['api-url'] ?? null,
              login: session?.login ?? null,
              session: session === null ? 'none' : expired ? 'expired' : 'active',
            });
          }
          if (ctx.out.json) return ctx.out.data({ data: rows });
          for (const row of rows) {
            const who = row.session === 'none' ? 'not logged in' : `${row.login ?? '?'} (${row.session})`;
            ctx.out.line(
              `${row.current ? '*' : ' '} ${row.profile}  ${row.api_url ?? '(default API URL)'}  ${who}`,
            );
          }
        }),
      )
      .demandCommand(1, 'Say what to do: set, get or profiles.'),
  );
}
