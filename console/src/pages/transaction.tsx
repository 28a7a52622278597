import { useEffect, useState, type ReactNode } from 'react';
import type { AdminTransaction, TimelineEntry, TransactionTimeline } from '@payments/client';
import { ErrorMessage } from '../components/error-message.js';
import { formatAmount, formatTime } from '../components/formatting.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';
import { Link } from '../router.js';
import './transaction.css';
import { transactionName } from './transactions.js';

type Source = keyof TransactionTimeline['sources'];

const KINDS: Record<TimelineEntry['kind'], string> = {
  created: 'Created',
  provider_request: 'Provider request',
  provider_response: 'Provider answer',
  provider_event: 'Provider event',
  posting: 'Posting',
  status_change: 'Status change',
  reversal: 'Reversal',
  webhook_event: 'Webhook event',
  webhook_delivery: 'Webhook delivery',
};

/** What the timeline lacks when a service did not answer. */
const PARTS: Record<Source, string> = {
  ledger: 'the ledger’s own steps',
  'webhook-ingest': 'the provider’s events received',
  'webhook-delivery': 'the outgoing webhook events and deliveries',
};

/** GET /admin/transactions/{id}/timeline: one transaction's fields and everything that happened to it. */
export function TransactionPage({ id }: { id: string }) {
  const { client } = useConsole();
  const [timeline, setTimeline] = useState<TransactionTimeline | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const abort = new AbortController();
    client.admin.transactions.timeline(id, { signal: abort.signal }).then(
      (answer) => {
        if (!abort.signal.aborted) setTimeline(answer);
      },
      (failure: unknown) => {
        if (!abort.signal.aborted) setError(failure);
      },
    );
    return () => abort.abort();
  }, [client, id]);

  if (!timeline) {
    return (
      <>
        <PageHeading>Transaction {id}</PageHeading>
        <ErrorMessage error={error} />
        {!error && <p aria-busy="true">Loading…</p>}
        <p>
          <Link to="/transactions">Back to the transactions</Link>
        </p>
      </>
    );
  }
  const { transaction } = timeline;
  const unavailable = (Object.keys(timeline.sources) as Source[]).filter(
    (source) => timeline.sources[source] === 'unavailable',
  );
  return (
    <>
      <PageHeading>{transactionName(transaction)}</PageHeading>
      <p>
        <Link to="/transactions">Back to the transactions</Link>
      </p>
      <TransactionFields transaction={transaction} />
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        {unavailable.map((source) => (
          <p key={source} className="notice unavailable">
            Unavailable: {PARTS[source]} ({source} did not answer), so the timeline lacks them.
          </p>
        ))}
        {timeline.truncated && (
          <p className="notice">Only the newest 200 steps of a part are shown: the timeline is truncated.</p>
        )}
        <ol className="timeline" aria-label="Timeline, oldest first">
          {timeline.entries.map((entry, index) => (
            <TimelineItem key={`${entry.at}-${entry.kind}-${index}`} entry={entry} />
          ))}
        </ol>
      </section>
    </>
  );
}

function TransactionFields({ transaction: t }: { transaction: AdminTransaction }) {
  const fields: [string, ReactNode][] = [
    ['Id', <span className="mono">{t.id}</span>],
    ['Type', t.type],
    ['Status', t.failure_reason ? `${t.status} (${t.failure_reason})` : t.status],
    ['Amount', formatAmount(t.amount, t.currency)],
    ['Fee', t.fee === undefined ? '—' : formatAmount(t.fee, t.currency)],
    ['Account', <AccountLink id={t.account_id} />],
    ['Owner', <UserLink id={t.user_id} />],
  ];
  if (t.counterparty_account_id) {
    fields.push(['Counterparty account', <AccountLink id={t.counterparty_account_id} />]);
    fields.push(['Counterparty owner', <UserLink id={t.counterparty_user_id} />]);
  }
  if (t.original_transaction_id) {
    fields.push([
      'Reverses',
      <Link to={`/transactions/${t.original_transaction_id}`}>{t.original_transaction_id}</Link>,
    ]);
  }
  if (t.provider_payment) {
    const p = t.provider_payment;
    fields.push([
      'Provider',
      `${p.provider} ${p.kind} ${p.reference ?? '(no reference yet)'}: ${p.state}, ${p.attempts} call(s)` +
        (p.last_error ? `, last error: ${p.last_error}` : ''),
    ]);
  }
  fields.push(
    ['Reference', t.reference ?? '—'],
    [
      'Metadata',
      Object.keys(t.metadata ?? {}).length > 0 ? (
        <span className="mono">
          {Object.entries(t.metadata ?? {})
            .map(([key, value]) => `${key}=${String(value)}`)
            .join(', ')}
        </span>
      ) : (
        '—'
      ),
    ],
    ['Created', formatTime(t.created_at)],
    ['Completed', formatTime(t.completed_at)],
  );
  return (
    <dl className="figures">
      {fields.map(([term, value]) => (
        <FieldPair key={term} term={term} value={value} />
      ))}
    </dl>
  );
}

function FieldPair({ term, value }: { term: string; value: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}

function TimelineItem({ entry }: { entry: TimelineEntry }) {
  const details: ReactNode[] = [];
  if (entry.status) details.push(`status ${entry.status}`);
  if (entry.reason) details.push(`reason ${entry.reason}`);
  if (entry.reference) details.push(<span className="mono">{entry.reference}</span>);
  if (entry.status_code !== undefined && entry.status_code !== null)
    details.push(`HTTP ${entry.status_code}`);
  if (entry.error) details.push(`error: ${entry.error}`);
  if (entry.transaction_id) {
    details.push(
      <Link to={`/transactions/${entry.transaction_id}`}>
        {entry.kind === 'reversal' ? 'reversal' : 'transaction'} {entry.transaction_id}
      </Link>,
    );
  }
  return (
    <li className={`timeline-entry timeline-${entry.kind}`}>
      <time dateTime={entry.at}>{formatTime(entry.at)}</time>
      <span className="timeline-kind">{KINDS[entry.kind]}</span>
      <span className="timeline-summary">{entry.summary}</span>
      <span className="timeline-details">
        {details.map((detail, index) => (
          <span key={index}>{detail}</span>
        ))}
        <span className="hint">from {entry.source}</span>
      </span>
    </li>
  );
}

function AccountLink({ id }: { id: string | null | undefined }) {
  if (!id) return <>—</>;
  return (
    <Link to={`/transactions?account_id=${id}`} className="mono" title="This account's transactions">
      {id}
    </Link>
  );
}

/** A user's id, linking to their transactions. */
export function UserLink({ id, children }: { id: string | null | undefined; children?: ReactNode }) {
  if (!id) return <>—</>;
  return (
    <Link to={`/transactions?user_id=${id}`} className="mono" title="This user's transactions">
      {children ?? id}
    </Link>
  );
}
