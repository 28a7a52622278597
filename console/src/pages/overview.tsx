import { useEffect, useState, type ReactNode } from 'react';
import type { Overview } from '@payments/client';
import { ErrorMessage } from '../components/error-message.js';
import { formatTime } from '../components/formatting.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';
import { LineChart } from './overview-chart.js';

type OverviewWindow = Overview['window'];
type Activity = NonNullable<Overview['totals']>;
type Bucket = NonNullable<Overview['series']>[number];

/** How often the page asks again while it is shown. */
const REFRESH_MS = 15_000;
const WINDOWS: Record<OverviewWindow, { label: string; bucket: string }> = {
  hour: { label: 'Last hour', bucket: 'minute' },
  day: { label: 'Last day', bucket: '15 minutes' },
};
const TYPES = [
  ['deposits', 'Deposits', 'first'],
  ['withdrawals', 'Withdrawals', 'second'],
  ['transfers', 'Transfers', 'third'],
] as const;

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
const clock = (iso: string) =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });

/** GET /admin/overview: activity over the last hour or day as charts and figures, and the platform's gauges now. */
export function OverviewPage() {
  const { client } = useConsole();
  const [range, setRange] = useState<OverviewWindow>('hour');
  const [overview, setOverview] = useState<Overview | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let abort = new AbortController();
    const load = () => {
      abort.abort();
      abort = new AbortController();
      const { signal } = abort;
      client.admin.overview.get({ window: range }, { signal }).then(
        (answer) => {
          if (signal.aborted) return;
          setOverview(answer);
          setError(null);
        },
        (failure: unknown) => {
          if (!signal.aborted) setError(failure);
        },
      );
    };
    load();
    // Only while the tab is visible: a console left open in the background asks nothing.
    const timer = window.setInterval(() => {
      if (document.visibilityState === 'visible') load();
    }, REFRESH_MS);
    return () => {
      window.clearInterval(timer);
      abort.abort();
    };
  }, [client, range]);

  const shown = overview?.window === range ? overview : null;
  return (
    <>
      <PageHeading>Overview</PageHeading>
      <div className="window-toggle" role="group" aria-label="Window">
        {(Object.keys(WINDOWS) as OverviewWindow[]).map((option) => (
          <button key={option} type="button" aria-pressed={range === option} onClick={() => setRange(option)}>
            {WINDOWS[option].label}
          </button>
        ))}
        {shown && (
          <span className="hint">
            Updated {formatTime(shown.generated_at)}; refreshed every {REFRESH_MS / 1000} s.
          </span>
        )}
      </div>
      <ErrorMessage error={error} />
      {shown && <Missing overview={shown} />}
      {shown && <ActivitySection overview={shown} />}
      {shown && <CurrentFigures overview={shown} />}
      {!shown && !error && <p aria-busy="true">Loading…</p>}
    </>
  );
}

function Missing({ overview }: { overview: Overview }) {
  if (overview.missing.length === 0) return null;
  return (
    <div className="notice">
      <p>Some figures are unavailable: a service did not answer in time.</p>
      <ul>
        {overview.missing.map((part) => (
          <li key={part.part}>
            <span className="mono">{part.part}</span>: {part.detail}
          </li>
        ))}
      </ul>
    </div>
  );
}

function ActivitySection({ overview }: { overview: Overview }) {
  const { label, bucket } = WINDOWS[overview.window];
  const { series, totals } = overview;
  return (
    <section aria-labelledby="overview-activity">
      <h2 id="overview-activity">Activity: {label.toLowerCase()}</h2>
      {series && totals ? (
        <>
          <Totals totals={totals} />
          <div className="charts">
            <LineChart
              title={`Transactions created per ${bucket}`}
              summary={TYPES.map(([type, name]) => `${name}: ${totals[type].created}`).join(', ')}
              labels={series.map((b) => clock(b.start))}
              series={TYPES.map(([type, name, style]) => ({
                name,
                style,
                values: series.map((b) => b[type].created),
              }))}
            />
            <LineChart
              title={`Failure and decline rates per ${bucket}`}
              summary={`Failure rate ${percent(totals.failure_rate)}, decline rate ${percent(totals.decline_rate)}`}
              labels={series.map((b) => clock(b.start))}
              max={1}
              formatValue={(value) => `${Math.round(value * 100)} %`}
              series={[
                { name: 'Failure rate', style: 'second', values: series.map((b) => b.failure_rate) },
                { name: 'Decline rate', style: 'third', values: series.map((b) => b.decline_rate) },
              ]}
            />
          </div>
          <BucketTable series={series} bucket={bucket} />
        </>
      ) : (
        <p className="unavailable">Activity unavailable: the ledger&apos;s books did not answer in time.</p>
      )}
    </section>
  );
}

function Totals({ totals }: { totals: Activity }) {
  return (
    <table className="totals">
      <caption>Transactions in the window</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col" className="number">
            Created
          </th>
          <th scope="col" className="number">
            Completed
          </th>
          <th scope="col" className="number">
            Failed
          </th>
        </tr>
      </thead>
      <tbody>
        {TYPES.map(([type, name]) => (
          <tr key={type}>
            <th scope="row">{name}</th>
            <td className="number">{totals[type].created}</td>
            <td className="number">{totals[type].completed}</td>
            <td className="number">{totals[type].failed}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Failure rate</th>
          <td className="number" colSpan={3}>
            {percent(totals.failure_rate)}
          </td>
        </tr>
        <tr>
          <th scope="row">Card declines</th>
          <td className="number" colSpan={3}>
            {totals.card_declines} of {totals.card_attempts} attempts ({percent(totals.decline_rate)})
          </td>
        </tr>
      </tfoot>
    </table>
  );
}

/** The charts' figures as text: every bucket, newest first. */
function BucketTable({ series, bucket }: { series: Bucket[]; bucket: string }) {
  return (
    <details>
      <summary>Figures per {bucket}</summary>
      <div className="table-scroll">
        <table>
          <caption>Transactions created and rates per {bucket}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              {TYPES.map(([type, name]) => (
                <th key={type} scope="col" className="number">
                  {name}
                </th>
              ))}
              <th scope="col" className="number">
                Failure rate
              </th>
              <th scope="col" className="number">
                Decline rate
              </th>
            </tr>
          </thead>
          <tbody>
            {[...series].reverse().map((b) => (
              <tr key={b.start}>
                <th scope="row">{formatTime(b.start)}</th>
                {TYPES.map(([type]) => (
                  <td key={type} className="number">
                    {b[type].created}
                  </td>
                ))}
                <td className="number">{percent(b.failure_rate)}</td>
                <td className="number">{percent(b.decline_rate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

const UNAVAILABLE = <span className="unavailable">Unavailable</span>;
const orUnavailable = (value: number | null | undefined, format: (value: number) => string = String) =>
  value === null || value === undefined ? UNAVAILABLE : format(value);
const seconds = (value: number) => `${value.toFixed(1)} s`;

function CurrentFigures({ overview }: { overview: Overview }) {
  const { reconciliation, provider_requests: requests } = overview;
  const openKinds = reconciliation
    ? Object.entries(reconciliation.open_cases_by_kind).filter(([, count]) => count > 0)
    : [];
  return (
    <section aria-labelledby="overview-now">
      <h2 id="overview-now">Now</h2>
      <dl className="figures">
        <dt>Open reconciliation cases</dt>
        <dd>
          {orUnavailable(reconciliation?.open_cases)}
          {openKinds.length > 0 && ` (${openKinds.map(([kind, count]) => `${kind}: ${count}`).join(', ')})`}
        </dd>
        <dt>Unconfirmed withdrawals</dt>
        <dd>{orUnavailable(reconciliation?.unconfirmed_withdrawals)}</dd>
        <dt>Provider requests pending</dt>
        <dd>
          {requests
            ? `${requests.waiting}${requests.waiting > 0 ? ` (oldest ${seconds(requests.oldest_seconds)})` : ''}`
            : UNAVAILABLE}
        </dd>
        <dt>Webhook deliveries pending</dt>
        <dd>{orUnavailable(overview.webhook_deliveries_pending)}</dd>
        {overview.outbox.map((outbox) => (
          <FigurePair
            key={`outbox-${outbox.service}`}
            term={`Outbox age, ${outbox.service}`}
            value={orUnavailable(outbox.oldest_unpublished_seconds, seconds)}
          />
        ))}
      </dl>
      <table className="gauges">
        <caption>Queues</caption>
        <thead>
          <tr>
            <th scope="col">Queue</th>
            <th scope="col" className="number">
              Ready messages
            </th>
            <th scope="col" className="number">
              Dead letters
            </th>
          </tr>
        </thead>
        <tbody>
          {overview.queues.map(({ queue, depth }) => (
            <tr key={queue}>
              <th scope="row">{queue}</th>
              <td className="number">{orUnavailable(depth)}</td>
              <td className="number">
                {orUnavailable(overview.dead_letters.find((d) => d.queue === queue)?.count)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function FigurePair({ term, value }: { term: string; value: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}
