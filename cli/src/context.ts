import { createPaymentsClient, type PaymentsClient } from '@payments/client';
import { CURRENT_VERSION } from '@payments/contracts/versions';
import { createCurrencyExponents, type CurrencyExponents } from './amounts.js';
import { cliErrorFrom } from './api-errors.js';
import { createOutput, type Output } from './output.js';
import { createSessionTokens } from './session-tokens.js';
import { usageError } from './exit-codes.js';
import { createStateStore, DEFAULT_PROFILE, PROFILE_NAME, type StateStore } from './state-store.js';
import { CLI_VERSION } from './version.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** Each call's time limit, its retries included. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface GlobalArgs {
  'api-url'?: string;
  'api-key'?: string;
  profile?: string;
  json?: boolean;
}

/** What every command works with, built once per invocation from the global options, env and settings. */
export interface CommandContext {
  /** The typed client, in the API's current version, with the token `payments login` saved. */
  api: PaymentsClient;
  /** The gateway the client talks to. */
  baseUrl: string;
  /** A failure of the client as the CLI reports it (a CliError and its exit code); anything else as it is. */
  failure(error: unknown): unknown;
  out: Output;
  state: StateStore;
  env: NodeJS.ProcessEnv;
  exponents: CurrencyExponents;
  /** Spinners and prompts are for people at a terminal, not for scripts. */
  interactive: boolean;
}

/** The profile an invocation uses: `--profile`, else `PAYMENTS_PROFILE`, else the default one. */
export function profileOf(argv: GlobalArgs, env: NodeJS.ProcessEnv): string {
  const profile = argv.profile ?? (env.PAYMENTS_PROFILE || DEFAULT_PROFILE);
  if (!PROFILE_NAME.test(profile)) {
    throw usageError(`"${profile}" is not a profile name.`, [
      'A profile name is letters, digits, - and _ (at most 63), starting with a letter or digit.',
    ]);
  }
  return profile;
}

export async function createContext(argv: GlobalArgs, env: NodeJS.ProcessEnv): Promise<CommandContext> {
  const state = createStateStore(env, profileOf(argv, env));
  const settings = await state.readSettings();
  const baseUrl = argv['api-url'] ?? env.PAYMENTS_API_URL ?? settings['api-url'] ?? DEFAULT_API_URL;
  const json = argv.json ?? settings.output === 'json';
  // An API key, when given, is the credential of every call instead of the saved session.
  const apiKey = argv['api-key'] ?? (env.PAYMENTS_API_KEY || undefined);
  const session = createSessionTokens(state, (token) => api.auth.refresh(token));
  const tokens = apiKey === undefined ? session : { getToken: () => Promise.resolve(apiKey) };
  const api: PaymentsClient = createPaymentsClient({
    baseUrl,
    apiVersion: CURRENT_VERSION,
    tokenProvider: tokens,
    timeoutMs: REQUEST_TIMEOUT_MS,
    userAgent: `payments-cli/${CLI_VERSION}`,
  });
  return {
    api,
    baseUrl,
    failure: (error) =>
      cliErrorFrom(error, {
        baseUrl,
        timeoutMs: REQUEST_TIMEOUT_MS,
        tokenSent: apiKey === undefined && session.handedOut(),
      }),
    out: createOutput(json, env),
    state,
    env,
    exponents: createCurrencyExponents(api.currencies),
    interactive: Boolean(process.stderr.isTTY) && !json,
  };
}
