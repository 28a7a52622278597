import { spawn } from 'node:child_process';
import path from 'node:path';
import { testRuntime } from './system.js';

/** The CLI's package in this checkout (the test kit sits at packages/testkit/src or /dist). */
const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'cli');
/** The command as installed: in a checkout it runs the sources through tsx, else the compiled dist/. */
export const PAYMENTS_BIN = path.join(CLI, 'bin', 'payments.js');
/** What the tests run: the compiled CLI the global setup built (~0.4 s of CPU a run, against ~1 s through tsx). */
const ENTRY = testRuntime() === 'compiled' ? path.join(CLI, 'dist', 'main.js') : PAYMENTS_BIN;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a user would, without a terminal, and collects what it printed. */
export function runPayments(
  args: string[],
  env: Record<string, string | undefined>,
  entry = ENTRY,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
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
  const quoted = [process.execPath, ENTRY, ...args]
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
