import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../bin/payments.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node cli/bin/payments.js …` as a user would, without a terminal, and collects what it printed. */
export function runPayments(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), typing `input` once `prompt` appears, as a person would.
 * The terminal echoes typed input (`-E always`) unless the program turns echo off, as a password prompt must.
 */
export function runPaymentsOnTerminal(
  args: string[],
  env: Record<string, string | undefined>,
  dialogue: { prompt: string; input: string }[],
): Promise<CliRun> {
  const quoted = [process.execPath, BIN, ...args]
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-E', 'always', '-e', '-c', quoted, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', TERM: 'dumb', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const pending = [...dialogue];
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const next = pending[0];
      if (next && stdout.includes(next.prompt)) {
        pending.shift();
        child.stdin.write(`${next.input}\r`);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
