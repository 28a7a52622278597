import { createInterface } from 'node:readline/promises';
import { read } from 'read';
import { CliError, EXIT, usageError } from './exit-codes.js';

export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY);
}

/** Reads a line from the terminal without echoing it (passwords), with the terminal's line editing. */
export async function promptHidden(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw usageError('A password is needed and there is no terminal to ask on.');
  try {
    return await read({ prompt: question, silent: true, replace: '', output: process.stderr });
  } catch (error) {
    // Ctrl-C at the prompt.
    if (error instanceof Error && error.message === 'canceled') throw new CliError(EXIT.usage, 'Cancelled.');
    throw error;
  }
}

/** Asks a question on the terminal and returns the trimmed answer. */
export async function promptLine(question: string): Promise<string> {
  const reader = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await reader.question(question)).trim();
  } finally {
    reader.close();
  }
}

/** A password from --password, PAYMENTS_PASSWORD, or a no-echo prompt; never from anywhere that logs it. */
export async function obtainPassword(
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  options: { confirm?: boolean; question?: string } = {},
): Promise<string> {
  if (given) return given;
  if (env.PAYMENTS_PASSWORD) return env.PAYMENTS_PASSWORD;
  if (!canPrompt()) {
    throw usageError('No password given.', [
      'Run in a terminal to be asked for it, or set PAYMENTS_PASSWORD (or --password) in scripts.',
    ]);
  }
  const password = await promptHidden(options.question ?? 'Password: ');
  if (options.confirm && (await promptHidden('Repeat password: ')) !== password) {
    throw usageError('The passwords do not match.');
  }
  return password;
}
