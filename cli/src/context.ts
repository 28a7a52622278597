import { createCurrencyExponents, type CurrencyExponents } from './amounts.js';
import { createApiClient, type ApiClient } from './api-client.js';
import { createOutput, type Output } from './output.js';
import { createStateStore, type StateStore } from './state-store.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

export interface GlobalArgs {
  'api-url'?: string;
  json?: boolean;
}

/** What every command works with, built once per invocation from the global options, env and settings. */
export interface CommandContext {
  api: ApiClient;
  out: Output;
  state: StateStore;
  env: NodeJS.ProcessEnv;
  exponents: CurrencyExponents;
  /** Spinners and prompts are for people at a terminal, not for scripts. */
  interactive: boolean;
}

export async function createContext(argv: GlobalArgs, env: NodeJS.ProcessEnv): Promise<CommandContext> {
  const state = createStateStore(env);
  const settings = await state.readSettings();
  const baseUrl = argv['api-url'] ?? env.PAYMENTS_API_URL ?? settings['api-url'] ?? DEFAULT_API_URL;
  const json = argv.json ?? settings.output === 'json';
  const api = createApiClient({ baseUrl, state });
  return {
    api,
    out: createOutput(json, env),
    state,
    env,
    exponents: createCurrencyExponents(api),
    interactive: Boolean(process.stderr.isTTY) && !json,
  };
}
