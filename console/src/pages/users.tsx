import { useCallback, useState } from 'react';
import type { Account, User, UserSearchQuery } from '@payments/client';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { formatAmount, formatTime } from '../components/formatting.js';
import { FormDialog, ReasonField } from '../components/form-dialog.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';

const MATCHES = {
  start: 'Start of username or e-mail',
  id: 'Start of id',
  username: 'Username',
  email: 'E-mail',
} as const;
type Match = keyof typeof MATCHES;
const STATUSES = ['active', 'disabled', 'locked'] as const;
type Status = (typeof STATUSES)[number];

/** The search box's text as the query of GET /admin/users, by what it is to match. */
function userQuery(search: string, match: Match, status: Status | ''): UserSearchQuery {
  const criteria: UserSearchQuery = status ? { status } : {};
  if (!search) return criteria;
  if (match === 'id') return { ...criteria, id_prefix: search };
  if (match === 'username') return { ...criteria, username: search };
  if (match === 'email') return { ...criteria, email: search };
  return { ...criteria, q: search };
}

/** Users: find one, disable or enable them with a reason, and see their accounts. */
export function UsersPage() {
  const { client, session } = useConsole();
  const [match, setMatch] = useState<Match>('start');
  const [status, setStatus] = useState<Status | ''>('');
  const [applied, setApplied] = useState<{ match: Match; status: Status | '' }>({ match, status });
  const [changing, setChanging] = useState<User | null>(null);
  const [reason, setReason] = useState('');
  const [selected, setSelected] = useState<User | null>(null);
  const [changes, setChanges] = useState(0);

  const load = useCallback(
    (query: TableQuery, signal: AbortSignal) =>
      client.admin.users.findPage(
        {
          ...userQuery(query.search, applied.match, applied.status),
          ...pageOf(query),
        },
        { signal },
      ),
    [client, applied],
  );

  const columns: Column<User>[] = [
    { header: 'Username', cell: (user) => user.username },
    { header: 'E-mail', cell: (user) => user.email },
    { header: 'Id', cell: (user) => <span className="mono">{user.id}</span> },
    { header: 'Role', cell: (user) => user.role },
    { header: 'Status', cell: (user) => user.status },
    { header: 'Created', cell: (user) => formatTime(user.created_at) },
    {
      header: 'Actions',
      cell: (user) => (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => setSelected(user)}>
            Accounts<span className="visually-hidden"> of {user.username}</span>
          </button>
          {user.id !== session.userId && (
            <button
              type="button"
              onClick={() => {
                setReason('');
                setChanging(user);
              }}
            >
              {user.status === 'active' ? 'Disable' : 'Enable'}
              <span className="visually-hidden"> {user.username}</span>
            </button>
          )}
        </div>
      ),
    },
  ];

  const target = changing?.status === 'active' ? 'disabled' : 'active';
  return (
    <>
      <PageHeading>Users</PageHeading>
      <DataTable
        caption="Users"
        columns={columns}
        load={load}
        rowId={(user) => user.id}
        reloadKey={changes}
        onSearch={() => setApplied({ match, status })}
        searchHint="Leave it empty to list every user, by username."
        filters={
          <>
            <label htmlFor="users-match">Matching</label>
            <select
              id="users-match"
              value={match}
              onChange={(event) => setMatch(event.target.value as Match)}
            >
              {Object.entries(MATCHES).map(([value, name]) => (
                <option key={value} value={value}>
                  {name}
                </option>
              ))}
            </select>
            <label htmlFor="users-status">Status</label>
            <select
              id="users-status"
              value={status}
              onChange={(event) => setStatus(event.target.value as Status | '')}
            >
              <option value="">Any</option>
              {STATUSES.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          </>
        }
        empty="No user matches."
      />
      {selected && <UserAccounts user={selected} />}
      {changing && (
        <FormDialog
          title={`${target === 'disabled' ? 'Disable' : 'Enable'} ${changing.username}`}
          submitLabel={target === 'disabled' ? 'Disable' : 'Enable'}
          onClose={() => setChanging(null)}
          onSubmit={async () => {
            await client.admin.users.setStatus(changing.id, { status: target, reason: reason.trim() });
            setChanges((count) => count + 1);
          }}
        >
          <p>
            {target === 'disabled'
              ? 'They are signed out everywhere and refused on every call until enabled again.'
              : 'They can sign in and use the API again.'}
          </p>
          <ReasonField id="user-status-reason" value={reason} onChange={setReason} required />
        </FormDialog>
      )}
    </>
  );
}

const ACCOUNT_COLUMNS: Column<Account>[] = [
  { header: 'Account', cell: (account) => <span className="mono">{account.id}</span> },
  { header: 'Currency', cell: (account) => account.currency },
  { header: 'Balance', cell: (account) => formatAmount(account.balance, account.currency) },
  { header: 'Available', cell: (account) => formatAmount(account.available_balance, account.currency) },
  { header: 'Opened', cell: (account) => formatTime(account.created_at) },
];

function UserAccounts({ user }: { user: User }) {
  const { client } = useConsole();
  const load = useCallback(
    (query: TableQuery, signal: AbortSignal) =>
      client.admin.accounts.findPage(
        {
          user_id: user.id,
          ...pageOf(query),
        },
        { signal },
      ),
    [client, user.id],
  );
  return (
    <section aria-labelledby="user-accounts">
      <h2 id="user-accounts">Accounts of {user.username}</h2>
      <DataTable
        key={user.id}
        caption={`Accounts of ${user.username}`}
        columns={ACCOUNT_COLUMNS}
        load={load}
        rowId={(account) => account.id}
        searchable={false}
        empty="This user has no account."
      />
    </section>
  );
}
