import { createInterface } from 'node:readline/promises';
import { CliError, EXIT, usageError } from './exit-codes.js';

export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY);
}

/** Reads a line from the terminal without echoing it (passwords). */
export function promptHidden(question: string): Promise<string> {
  const { stdin, stderr } = process;
  if (!stdin.isTTY) throw usageError('A password is needed and there is no terminal to ask on.');
  // Echo goes off before the prompt shows, so nothing typed in answer to it can be echoed.
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(() => resolve(value));
        if (char === '\u0003') return finish(() => reject(new CliError(EXIT.usage, 'Cancelled.')));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    stdin.on('data', onData);
  });
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
