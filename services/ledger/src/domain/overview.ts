/** The windows the admin overview charts, and the width of each bar (ADR 0127). */
export const OVERVIEW_WINDOWS = {
  hour: { bucketSeconds: 60, buckets: 60 },
  day: { bucketSeconds: 900, buckets: 96 },
} as const;
export type OverviewWindow = keyof typeof OVERVIEW_WINDOWS;

/** How far back the overview ever reads: its longest window, and one bucket more for a window read as it turns. */
export const OVERVIEW_LOOKBACK_MS = Math.max(
  ...Object.values(OVERVIEW_WINDOWS).map(
    ({ bucketSeconds, buckets }) => bucketSeconds * (buckets + 1) * 1000,
  ),
);

export const MOVEMENT_TYPES = ['deposit', 'withdrawal', 'transfer'] as const;
export type MovementType = (typeof MOVEMENT_TYPES)[number];

/** Of the transactions created in a bucket: how many, and how many of them have completed or failed since. */
export interface MovementCounts {
  created: number;
  completed: number;
  failed: number;
}

/** One row the store counted: a bucket (by its start) and a movement type, or a bucket's card attempts. */
export interface MovementRow extends MovementCounts {
  start: Date;
  type: MovementType;
}
export interface CountRow {
  start: Date;
  count: number;
}

export interface ActivityBucket {
  start: Date;
  movements: Record<MovementType, MovementCounts>;
  /** Card payments the provider declined in the bucket, and those it took (deposits completed through it). */
  cardDeclines: number;
  cardPayments: number;
}

const none = (): MovementCounts => ({ created: 0, completed: 0, failed: 0 });
const movementsOf = () =>
  Object.fromEntries(MOVEMENT_TYPES.map((type) => [type, none()])) as Record<MovementType, MovementCounts>;

/** Every bucket of the window from `from`, oldest first, the empty ones too: a chart needs no gaps filled. */
export function bucketsOf(
  from: Date,
  bucketSeconds: number,
  buckets: number,
  rows: { movements: MovementRow[]; declines: CountRow[]; payments: CountRow[] },
): ActivityBucket[] {
  const series: ActivityBucket[] = Array.from({ length: buckets }, (_, i) => ({
    start: new Date(from.getTime() + i * bucketSeconds * 1000),
    movements: movementsOf(),
    cardDeclines: 0,
    cardPayments: 0,
  }));
  const at = (start: Date) => series[Math.floor((start.getTime() - from.getTime()) / (bucketSeconds * 1000))];
  for (const row of rows.movements) {
    const bucket = at(row.start);
    if (bucket)
      bucket.movements[row.type] = { created: row.created, completed: row.completed, failed: row.failed };
  }
  for (const row of rows.declines) {
    const bucket = at(row.start);
    if (bucket) bucket.cardDeclines += row.count;
  }
  for (const row of rows.payments) {
    const bucket = at(row.start);
    if (bucket) bucket.cardPayments += row.count;
  }
  return series;
}

/** A share rounded to 4 places, or null where there is nothing to divide by. */
export function rateOf(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

/** Failed among those that ended (completed or failed), across the three movement types. */
export function failureRateOf(movements: Record<MovementType, MovementCounts>): number | null {
  const counts = Object.values(movements);
  const failed = counts.reduce((sum, c) => sum + c.failed, 0);
  const ended = counts.reduce((sum, c) => sum + c.failed + c.completed, 0);
  return rateOf(failed, ended);
}

/** Declined among the card payment attempts that ended: declined, or taken. */
export function declineRateOf(declines: number, payments: number): number | null {
  return rateOf(declines, declines + payments);
}

/** The window's totals, summed over its buckets. */
export function totalsOf(series: readonly ActivityBucket[]): Omit<ActivityBucket, 'start'> {
  const movements = movementsOf();
  let cardDeclines = 0;
  let cardPayments = 0;
  for (const bucket of series) {
    for (const type of MOVEMENT_TYPES) {
      movements[type].created += bucket.movements[type].created;
      movements[type].completed += bucket.movements[type].completed;
      movements[type].failed += bucket.movements[type].failed;
    }
    cardDeclines += bucket.cardDeclines;
    cardPayments += bucket.cardPayments;
  }
  return { movements, cardDeclines, cardPayments };
}

/** A Prometheus text exposition's samples, by metric name (the first sample of each; labels ignored). */
export function samplesOf(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const [, name, , value] = match;
    if (name && value && !samples.has(name)) samples.set(name, Number(value));
  }
  return samples;
}
