import type { LatencySummary } from './load.js';

export interface Goal {
  /** What the target says, e.g. "p99 < 50 ms". */
  text: string;
  met: boolean;
}

/** One row of the table: a measured scenario, its reference measured in the same run, and its target. */
export interface ScenarioRow {
  scenario: string;
  opsPerSecond: number;
  latencyMs: LatencySummary | null;
  operations: number;
  errors: number;
  reference?: { label: string; value: string };
  ratio?: number;
  target?: Goal;
  notes?: string[];
}

const pad = (text: string, width: number, right = false) =>
  right ? text.padStart(width) : text.padEnd(width);

const number = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '—';

const ms = (value: number | undefined) =>
  value === undefined
    ? '—'
    : value < 10
      ? value.toFixed(2)
      : value < 100
        ? value.toFixed(1)
        : value.toFixed(0);

/** The table printed at the end of a run, one line per scenario. */
export function renderTable(rows: readonly ScenarioRow[]): string {
  const header = [
    'scenario',
    'ops/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'errors',
    'reference',
    'ratio',
    'target',
    'met?',
  ];
  const lines = rows.map((row) => [
    row.scenario,
    number(row.opsPerSecond, row.opsPerSecond < 100 ? 1 : 0),
    ms(row.latencyMs?.p50),
    ms(row.latencyMs?.p95),
    ms(row.latencyMs?.p99),
    number(row.errors),
    row.reference ? `${row.reference.label}: ${row.reference.value}` : '—',
    row.ratio === undefined ? '—' : `${row.ratio.toFixed(2)}×`,
    row.target?.text ?? '—',
    row.target ? (row.target.met ? 'yes' : 'NO') : '—',
  ]);
  const numeric = new Set([1, 2, 3, 4, 5, 7]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => (line[column] as string).length)),
  );
  const format = (cells: string[]) =>
    `| ${cells.map((cell, column) => pad(cell, widths[column] as number, numeric.has(column))).join(' | ')} |`;
  return [
    format(header),
    `|${widths.map((width, column) => (numeric.has(column) ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`,
    ...lines.map(format),
  ].join('\n');
}
