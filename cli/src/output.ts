import { styleText } from 'node:util';
import Table from 'cli-table3';

export interface Output {
  json: boolean;
  /** One line of human output on stdout. */
  line(text: string): void;
  /** A value for scripts (pretty JSON on stdout). */
  data(value: unknown): void;
  /** Text exactly as the API sent it (a CSV report), on stdout. */
  text(value: string): void;
  table(head: string[], rows: string[][]): void;
  fields(entries: [string, string][]): void;
  /** A message on stderr: failures, and advice that must not pollute stdout. */
  note(text: string, style?: 'error' | 'warning' | 'dim'): void;
}

/** Colour only on a terminal and never with NO_COLOR (https://no-color.org). */
export function colourEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

export function createOutput(json: boolean, env: NodeJS.ProcessEnv): Output {
  const { stdout, stderr } = process;
  const colourOut = colourEnabled(stdout, env);
  const colourErr = colourEnabled(stderr, env);
  const paint = { error: 'red', warning: 'yellow', dim: 'dim' } as const;
  return {
    json,
    line: (text) => void stdout.write(`${text}\n`),
    data: (value) => void stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    text: (value) => void stdout.write(value),
    table(head, rows) {
      if (rows.length === 0) return void stdout.write('(none)\n');
      const table = new Table({
        head,
        style: { head: colourOut ? ['cyan'] : [], border: colourOut ? ['grey'] : [] },
        // No rule between rows: long lists stay compact.
        chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
      });
      table.push(...rows);
      stdout.write(`${table.toString()}\n`);
    },
    fields(entries) {
      const width = Math.max(...entries.map(([key]) => key.length));
      for (const [key, value] of entries) {
        const label = `${key}:`.padEnd(width + 2);
        stdout.write(`${colourOut ? styleText('bold', label) : label}${value}\n`);
      }
    },
    note: (text, style) =>
      void stderr.write(`${style && colourErr ? styleText(paint[style], text) : text}\n`),
  };
}
