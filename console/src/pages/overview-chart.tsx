import { useId } from 'react';
import './overview.css';

/** One line of a chart: its name in the legend, and a value per bucket (null: nothing to plot there). */
export interface ChartSeries {
  name: string;
  /** Picks the line's colour and dash from overview.css, so no series is told apart by colour alone. */
  style: 'first' | 'second' | 'third';
  values: (number | null)[];
}

export interface LineChartProps {
  /** The chart's accessible name, shown as its caption. */
  title: string;
  /** What the chart shows in words (totals over the window), read out with it. */
  summary: string;
  series: ChartSeries[];
  /** The label of each bucket, for the first and last tick. */
  labels: string[];
  /** The top of the scale; by default the largest value (at least 1). */
  max?: number;
  formatValue?: (value: number) => string;
}

const WIDTH = 640;
const HEIGHT = 200;
const PADDING = { top: 12, right: 12, bottom: 28, left: 48 };

/**
 * A line chart drawn as plain SVG (no script library, nothing inline the CSP would refuse): an image named by its
 * caption and described by its summary; the figures themselves are in a table beside it.
 */
export function LineChart({ title, summary, series, labels, max, formatValue = String }: LineChartProps) {
  const id = useId();
  const buckets = labels.length;
  const top = max ?? Math.max(1, ...series.flatMap((line) => line.values.filter((v) => v !== null)));
  const plotWidth = WIDTH - PADDING.left - PADDING.right;
  const plotHeight = HEIGHT - PADDING.top - PADDING.bottom;
  const x = (index: number) => PADDING.left + (buckets <= 1 ? 0 : (index / (buckets - 1)) * plotWidth);
  const y = (value: number) => PADDING.top + plotHeight - (value / top) * plotHeight;

  return (
    <figure className="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-summary`}
      >
        <line className="axis" x1={PADDING.left} y1={y(0)} x2={WIDTH - PADDING.right} y2={y(0)} />
        <line className="grid" x1={PADDING.left} y1={y(top)} x2={WIDTH - PADDING.right} y2={y(top)} />
        <text className="tick" x={PADDING.left - 6} y={y(top) + 4} textAnchor="end">
          {formatValue(top)}
        </text>
        <text className="tick" x={PADDING.left - 6} y={y(0) + 4} textAnchor="end">
          {formatValue(0)}
        </text>
        <text className="tick" x={PADDING.left} y={HEIGHT - 8} textAnchor="start">
          {labels[0] ?? ''}
        </text>
        <text className="tick" x={WIDTH - PADDING.right} y={HEIGHT - 8} textAnchor="end">
          {labels[buckets - 1] ?? ''}
        </text>
        {series.map((line) =>
          segments(line.values).map((segment) => (
            <polyline
              key={`${line.name}-${segment[0]?.index ?? 0}`}
              className={`series series-${line.style}`}
              points={segment.map(({ index, value }) => `${x(index)},${y(value)}`).join(' ')}
            />
          )),
        )}
        {series.map((line) =>
          line.values.map((value, index) =>
            value === null || !isolated(line.values, index) ? null : (
              <circle
                key={`${line.name}-${index}`}
                className={`point series-${line.style}`}
                cx={x(index)}
                cy={y(value)}
                r={3}
              />
            ),
          ),
        )}
      </svg>
      <ul className="legend" aria-hidden="true">
        {series.map((line) => (
          <li key={line.name} className={`legend-${line.style}`}>
            {line.name}
          </li>
        ))}
      </ul>
      <p id={`${id}-summary`} className="chart-summary">
        {summary}
      </p>
    </figure>
  );
}

/** The runs of consecutive values that are not null: a gap in the data is a gap in the line. */
function segments(values: (number | null)[]): { index: number; value: number }[][] {
  const runs: { index: number; value: number }[][] = [];
  let run: { index: number; value: number }[] = [];
  values.forEach((value, index) => {
    if (value === null) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else run.push({ index, value });
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/** A value with no neighbour draws no line, so it gets a dot. */
const isolated = (values: (number | null)[], index: number) =>
  (values[index - 1] ?? null) === null && (values[index + 1] ?? null) === null;
