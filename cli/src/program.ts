import { styleText } from 'node:util';
import { CLIENT_VERSION } from '@payments/client';
import { CURRENT_VERSION } from '@payments/contracts/versions';
import yargs, { type Argv } from 'yargs';
import { accountCommands } from './commands/account-commands.js';
import { apiKeyCommands } from './commands/api-key-commands.js';
import { adminCommands } from './commands/admin/admin-commands.js';
import { authCommands } from './commands/auth-commands.js';
import { configCommands } from './commands/config-commands.js';
import { currencyCommands } from './commands/currency-commands.js';
import { moneyCommands } from './commands/money-commands.js';
import { statementCommands } from './commands/statement-commands.js';
import type { Run } from './commands/run.js';
import { eventCommands } from './commands/event-commands.js';
import { transactionCommands } from './commands/transaction-commands.js';
import { refundCommands } from './commands/refund-commands.js';
import { userCommands } from './commands/user-commands.js';
import { webhookCommands } from './commands/webhook-commands.js';
import { createContext, DEFAULT_API_URL, type GlobalArgs } from './context.js';
import { CliError, EXIT, usageError } from './exit-codes.js';
import { colourEnabled } from './output.js';
import { CLI_VERSION } from './version.js';

const EXIT_CODES_HELP =
  'Exit codes: 0 ok, 1 transaction failed, 2 usage, 3 not logged in or not allowed, 4 not found, ' +
  '5 business rule, 6 API unreachable or failing, 7 timed out waiting. More in cli/README.md.';

/** Runs one `payments …` invocation and returns its exit code; nothing here calls process.exit. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let json = args.includes('--json');
  const run: Run = (handler) => async (argv) => {
    const ctx = await createContext(argv, env);
    json = ctx.out.json;
    try {
      await handler(ctx, argv);
    } catch (error) {
      throw ctx.failure(error);
    }
  };
  let cli: Argv<GlobalArgs> = yargs(args)
    .scriptName('payments')
    .usage('$0 <command> [options]\n\nA command-line client for the payments API (it talks to the gateway).')
    .parserConfiguration({ 'parse-positional-numbers': false })
    .option('api-url', {
      type: 'string',
      global: true,
      describe: `Gateway URL (or PAYMENTS_API_URL; default ${DEFAULT_API_URL})`,
    })
    .option('api-key', {
      type: 'string',
      global: true,
      describe: 'Call with this API key instead of the saved login (or PAYMENTS_API_KEY)',
    })
    .option('profile', {
      type: 'string',
      global: true,
      describe:
        'The environment to use, each with its own API URL and session (or PAYMENTS_PROFILE; default "default")',
    })
    .option('json', { type: 'boolean', global: true, describe: 'Print JSON for scripts' });
  cli = authCommands(cli, run);
  cli = accountCommands(cli, run);
  cli = moneyCommands(cli, run);
  cli = transactionCommands(cli, run);
  cli = refundCommands(cli, run);
  cli = statementCommands(cli, run);
  cli = currencyCommands(cli, run);
  cli = userCommands(cli, run);
  cli = webhookCommands(cli, run);
  cli = apiKeyCommands(cli, run);
  cli = eventCommands(cli, run);
  cli = adminCommands(cli, run);
  cli = configCommands(cli, run);
  cli = cli
    .completion('completion', 'Print a shell completion script (e.g. payments completion >> ~/.bashrc)')
    .demandCommand(1, 'Give a command.')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version('version', 'Show the version of the CLI and of the client it uses', versionLine())
    .epilogue(EXIT_CODES_HELP)
    .wrap(Math.min(110, process.stdout.columns ?? 80))
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? usageError(message ?? 'Invalid command.', ['Run payments --help for usage.']);
    });

  try {
    await cli.parseAsync();
    return EXIT.ok;
  } catch (error) {
    return report(error, json, env);
  }
}

/** `payments 0.2.0 (@payments/client 0.2.0, API 1.1, node 22.12.0)`. */
function versionLine(): string {
  return `payments ${CLI_VERSION} (@payments/client ${CLIENT_VERSION}, API ${CURRENT_VERSION}, node ${process.versions.node})`;
}

function report(error: unknown, json: boolean, env: NodeJS.ProcessEnv): number {
  const { stderr } = process;
  const paint = (text: string) => (colourEnabled(stderr, env) ? styleText('red', text) : text);
  if (!(error instanceof CliError)) {
    stderr.write(`${paint('Error:')} ${(error as Error).message ?? String(error)}\n`);
    return EXIT.transactionFailed;
  }
  if (json && error.problem !== undefined) {
    stderr.write(`${JSON.stringify(error.problem)}\n`);
  } else {
    stderr.write(`${paint('Error:')} ${error.message}\n`);
    for (const detail of error.details) stderr.write(`  ${detail}\n`);
  }
  return error.exitCode;
}
