import { useCallback, useEffect, useState } from 'react';
import type {
  ProviderMismatch,
  ReconciliationDecisionRequest,
  ReconciliationItem,
  ReconciliationRun,
} from '@payments/client';
import { RECONCILIATION_DECISIONS } from '@payments/contracts/enums';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { formatAmount, formatTime, isUuid } from '../components/formatting.js';
import { FormDialog, ReasonField } from '../components/form-dialog.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';
import { Link } from '../router.js';
import type { PageProps } from './index.js';

type Item = ReconciliationItem<'1.1'>;
type Decision = ReconciliationDecisionRequest['decision'];

const DECISIONS: Record<Decision, string> = {
  book: 'Book it: credit or debit the books to match the provider',
  refund: "Refund it: give the provider's money back to the payer",
  reverse: 'Reverse it: undo what the books did',
  nothing_owed: 'Nothing owed: close the case without a movement',
};

const kindOf = (item: Item) => item.kind.replace(/_/g, ' ');

const COLUMNS: Column<Item>[] = [
  { header: 'Kind', cell: kindOf },
  {
    header: 'Reference',
    cell: (item) =>
      item.kind === 'unconfirmed_withdrawal' ? (
        <span className="mono">{item.id}</span>
      ) : (
        <Link to={`/reconciliation/cases/${item.id}`}>
          <span className="mono">{item.provider_reference}</span>
        </Link>
      ),
  },
  {
    header: "Provider's figure",
    cell: (item) =>
      item.kind === 'unconfirmed_withdrawal'
        ? 'not confirmed'
        : formatAmount(item.provider_amount, item.currency),
  },
  {
    header: "Books' figure",
    cell: (item) =>
      item.kind === 'unconfirmed_withdrawal'
        ? formatAmount(item.amount, item.currency)
        : formatAmount(item.ledger_amount, item.currency),
  },
  { header: 'Status', cell: (item) => item.status },
  {
    header: 'Found',
    cell: (item) =>
      formatTime(item.kind === 'unconfirmed_withdrawal' ? item.reconciliation_required_at : item.found_at),
  },
];

/** Reconciliation: what waits for an operator, a case with both figures, its decision, and a run on demand. */
export function ReconciliationPage({ subpath }: PageProps) {
  const caseId = /^\/cases\/([^/]+)$/.exec(subpath)?.[1];
  return (
    <>
      <PageHeading>Reconciliation</PageHeading>
      {caseId ? <CaseView caseId={caseId} /> : <OpenItems />}
    </>
  );
}

function OpenItems() {
  const { client } = useConsole();
  const [run, setRun] = useState<ReconciliationRun | null>(null);
  const [running, setRunning] = useState(false);
  const [runError, setRunError] = useState<unknown>(null);
  const [runs, setRuns] = useState(0);

  const load = useCallback(
    async (query: TableQuery, signal: AbortSignal) => {
      if (query.search) {
        if (!isUuid(query.search)) throw new Error(`"${query.search}" is not a case id`);
        const found = await client.admin.reconciliation.getCase(query.search, { signal });
        return { data: [found as Item], has_more: false };
      }
      return client.admin.reconciliation.listPage(pageOf(query), { signal });
    },
    [client],
  );

  const startRun = async () => {
    setRunning(true);
    setRunError(null);
    try {
      setRun(await client.admin.reconciliation.run());
      setRuns((count) => count + 1);
    } catch (failure) {
      setRunError(failure);
    } finally {
      setRunning(false);
    }
  };

  return (
    <>
      <p>
        Withdrawals still waiting for the provider&apos;s confirmation, then the open cases where the
        provider&apos;s records and the books disagree. Open a case to decide it.
      </p>
      <div className="actions">
        <button type="button" onClick={() => void startRun()} disabled={running}>
          Start a run
        </button>
      </div>
      <ErrorMessage error={runError} />
      {run && (
        <p role="status">
          Run finished: {run.checked} checked, {run.agreed} agreed, {run.mismatches} mismatches ({run.opened}{' '}
          new case{run.opened === 1 ? '' : 's'}, {run.cleared} cleared), {run.unsettled} unsettled.
        </p>
      )}
      <DataTable
        caption="Waiting for an operator"
        columns={COLUMNS}
        load={load}
        rowId={(item) => item.id}
        reloadKey={runs}
        searchHint="A case id opens that case, resolved or not; empty lists everything waiting."
        empty="Nothing waits for an operator."
      />
    </>
  );
}

function CaseView({ caseId }: { caseId: string }) {
  const { client } = useConsole();
  const [found, setFound] = useState<ProviderMismatch | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [deciding, setDeciding] = useState(false);
  const [decision, setDecision] = useState<Decision>('book');
  const [reason, setReason] = useState('');

  useEffect(() => {
    const abort = new AbortController();
    client.admin.reconciliation
      .getCase(caseId, { signal: abort.signal })
      .then(setFound, (failure: unknown) => {
        if (!abort.signal.aborted) setError(failure);
      });
    return () => abort.abort();
  }, [client, caseId]);

  return (
    <section aria-labelledby="case-title">
      <p>
        <Link to="/reconciliation">Back to the open items</Link>
      </p>
      <h2 id="case-title">Case {caseId}</h2>
      <ErrorMessage error={error} />
      {found && (
        <>
          <dl className="figures">
            <dt>Kind</dt>
            <dd>{found.kind.replace(/_/g, ' ')}</dd>
            <dt>Status</dt>
            <dd>{found.status}</dd>
            <dt>Provider&apos;s object</dt>
            <dd className="mono">{found.provider_reference}</dd>
            <dt>Transaction</dt>
            <dd className="mono">{found.transaction_id ?? 'none of ours'}</dd>
            <dt>Provider&apos;s figure</dt>
            <dd>{formatAmount(found.provider_amount, found.currency)}</dd>
            <dt>Books&apos; figure</dt>
            <dd>{formatAmount(found.ledger_amount, found.currency)}</dd>
            <dt>Found</dt>
            <dd>{formatTime(found.found_at)}</dd>
            <dt>Last seen</dt>
            <dd>{formatTime(found.last_seen_at)}</dd>
            {found.decision && (
              <>
                <dt>Decision</dt>
                <dd>{found.decision.replace(/_/g, ' ')}</dd>
                <dt>Reason</dt>
                <dd>{found.reason}</dd>
                <dt>Resolved</dt>
                <dd>{formatTime(found.resolved_at)}</dd>
              </>
            )}
          </dl>
          {found.status === 'open' && (
            <div className="actions">
              <button
                type="button"
                onClick={() => {
                  setReason('');
                  setDeciding(true);
                }}
              >
                Decide this case
              </button>
            </div>
          )}
        </>
      )}
      {deciding && found && (
        <FormDialog
          title="Resolve the case"
          submitLabel="Resolve"
          onClose={() => setDeciding(false)}
          onSubmit={async () => {
            setFound(
              await client.admin.reconciliation.resolveCase(found.id, { decision, reason: reason.trim() }),
            );
          }}
        >
          <label htmlFor="case-decision">Decision</label>
          <select
            id="case-decision"
            value={decision}
            onChange={(event) => setDecision(event.target.value as Decision)}
          >
            {RECONCILIATION_DECISIONS.map((value) => (
              <option key={value} value={value}>
                {DECISIONS[value]}
              </option>
            ))}
          </select>
          <ReasonField id="case-reason" value={reason} onChange={setReason} required />
        </FormDialog>
      )}
    </section>
  );
}
