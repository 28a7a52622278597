import { useCallback, useState, type FormEvent } from 'react';
import type { AdminTransaction, AdminTransactionQuery } from '@payments/client';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '@payments/contracts/enums';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { formatAmount, formatTime, shortId } from '../components/formatting.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';
import { Link } from '../router.js';
import type { PageProps } from './index.js';
import './transactions.css';
import { TransactionPage } from './transaction.js';

/** The filters as the form holds them, each a query parameter of GET /admin/transactions by the same name. */
const FIELDS = [
  'q',
  'type',
  'status',
  'account_id',
  'user_id',
  'from',
  'to',
  'amount_min',
  'amount_max',
  'currency',
  'reference',
  'metadata',
] as const;
type Field = (typeof FIELDS)[number];
type Filters = Record<Field, string>;

/** The filters a link or a bookmark gives in the address, e.g. `/console/transactions?user_id=…`. */
function filtersOf(search: string): Filters {
  const params = new URLSearchParams(search);
  return Object.fromEntries(FIELDS.map((field) => [field, params.get(field) ?? ''])) as Filters;
}

/** `key=value`, several separated by commas, as the API's `metadata[key]=value` pairs. */
function metadataOf(text: string): Record<string, string> | Error {
  const pairs: Record<string, string> = {};
  for (const pair of text.split(',').map((part) => part.trim())) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    if (equals <= 0) return new Error(`Metadata "${pair}" is not key=value`);
    pairs[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
  }
  return pairs;
}

/** The filters as the API's query: the ones left empty are left out; the API judges the rest (a 400 says why). */
function queryOf(filters: Filters): AdminTransactionQuery | Error {
  const { metadata, type, status, ...text } = filters;
  const pairs = metadataOf(metadata);
  if (pairs instanceof Error) return pairs;
  const query: AdminTransactionQuery = Object.fromEntries(
    Object.entries(text)
      .map(([field, value]) => [field, value.trim()])
      .filter(([, value]) => value !== ''),
  );
  if (type) query.type = type as AdminTransactionQuery['type'];
  if (status) query.status = status as AdminTransactionQuery['status'];
  if (Object.keys(pairs).length > 0) query.metadata = pairs;
  return query;
}

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** How a transaction is named, on its page's h1 and its link: its type and the start of its id. */
export const transactionName = (transaction: Pick<AdminTransaction, 'id' | 'type'>) =>
  `${capitalized(transaction.type)} ${shortId(transaction.id)}…`;

const COLUMNS: Column<AdminTransaction>[] = [
  {
    header: 'Transaction',
    cell: (t) => (
      <Link to={`/transactions/${t.id}`} title={t.id}>
        {transactionName(t)}
      </Link>
    ),
  },
  { header: 'Status', cell: (t) => t.status },
  { header: 'Amount', cell: (t) => formatAmount(t.amount, t.currency) },
  { header: 'Owner', cell: (t) => <span className="mono">{t.user_id ? shortId(t.user_id) : '—'}</span> },
  {
    header: 'Provider reference',
    cell: (t) => <span className="mono">{t.provider_payment?.reference ?? '—'}</span>,
  },
  { header: 'Reference', cell: (t) => t.reference ?? '—' },
  { header: 'Created', cell: (t) => formatTime(t.created_at) },
];

/** Transactions: the search over every user's transactions, and below it each transaction's own page. */
export function TransactionsPage({ subpath }: PageProps) {
  const id = /^\/([^/]+)$/.exec(subpath)?.[1];
  if (id) return <TransactionPage key={id} id={decodeURIComponent(id)} />;
  return <TransactionSearch />;
}

/** GET /admin/transactions: newest first, by the search box (an id's start) and the filters. */
function TransactionSearch() {
  const [typed, setTyped] = useState<Filters>(() => filtersOf(window.location.search));
  const [applied, setApplied] = useState<Filters>(typed);
  const [invalid, setInvalid] = useState<Error | null>(null);
  const [searches, setSearches] = useState(0);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = queryOf(typed);
    if (next instanceof Error) {
      setInvalid(next);
      return;
    }
    setInvalid(null);
    setApplied(typed);
    setSearches((count) => count + 1);
    // The filters in the address: a reload or a bookmark finds the same transactions.
    const params = new URLSearchParams(Object.entries(typed).filter(([, value]) => value.trim() !== ''));
    const search = params.toString() ? `?${params.toString()}` : '';
    window.history.replaceState(null, '', `${window.location.pathname}${search}`);
  };

  const { client } = useConsole();
  const load = useCallback(
    async (page: TableQuery, signal: AbortSignal) => {
      const query = queryOf(applied);
      if (query instanceof Error) throw query;
      return client.admin.transactions.findPage(
        {
          ...query,
          ...pageOf(page),
        },
        { signal },
      );
    },
    [client, applied],
  );

  const field = (name: Field, label: string, props: { type?: string; hint?: string } = {}) => (
    <div>
      <label htmlFor={`transactions-${name}`}>{label}</label>
      <input
        id={`transactions-${name}`}
        type={props.type ?? 'text'}
        value={typed[name]}
        aria-describedby={props.hint ? `transactions-${name}-hint` : undefined}
        onChange={(event) => setTyped({ ...typed, [name]: event.target.value })}
      />
      {props.hint && (
        <span id={`transactions-${name}-hint`} className="hint">
          {props.hint}
        </span>
      )}
    </div>
  );
  const choice = (name: 'type' | 'status', label: string, options: readonly string[]) => (
    <div>
      <label htmlFor={`transactions-${name}`}>{label}</label>
      <select
        id={`transactions-${name}`}
        value={typed[name]}
        onChange={(event) => setTyped({ ...typed, [name]: event.target.value })}
      >
        <option value="">Any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <>
      <PageHeading>Transactions</PageHeading>
      <form role="search" className="filters transaction-filters" onSubmit={apply} aria-label="Transactions">
        {field('q', 'Search', {
          type: 'search',
          hint: 'The start of an id or of a provider reference (pi_…)',
        })}
        {choice('type', 'Type', TRANSACTION_TYPES)}
        {choice('status', 'Status', TRANSACTION_STATUSES)}
        {field('account_id', 'Account')}
        {field('user_id', 'User')}
        {field('from', 'From', { type: 'date' })}
        {field('to', 'To', { type: 'date' })}
        {field('amount_min', 'Amount at least', { hint: 'With a currency' })}
        {field('amount_max', 'Amount at most', { hint: 'With a currency' })}
        {field('currency', 'Currency')}
        {field('reference', 'Reference')}
        {field('metadata', 'Metadata', { hint: 'key=value, several separated by commas' })}
        <button type="submit">Find</button>
      </form>
      <ErrorMessage error={invalid} />
      <DataTable
        key={searches}
        caption="Transactions, newest first"
        columns={COLUMNS}
        load={load}
        rowId={(t) => t.id}
        searchable={false}
        empty="No transaction matches."
      />
    </>
  );
}
