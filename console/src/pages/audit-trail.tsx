import { useCallback, useState, type FormEvent } from 'react';
import type { AdminAction } from '@payments/client';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { formatTime, isUuid } from '../components/formatting.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';

const COLUMNS: Column<AdminAction>[] = [
  { header: 'When', cell: (action) => formatTime(action.created_at) },
  { header: 'Action', cell: (action) => <span className="mono">{action.action}</span> },
  { header: 'Subject', cell: (action) => <span className="mono">{action.subject}</span> },
  { header: 'Actor', cell: (action) => <span className="mono">{action.actor}</span> },
  { header: 'Owner', cell: (action) => <span className="mono">{action.owner ?? 'platform'}</span> },
  { header: 'Reason', cell: (action) => action.reason ?? '—' },
];

/** GET /admin/actions: every admin action, oldest first, narrowed to an actor (an admin) or an owner (a user). */
export function AuditTrailPage() {
  const { client } = useConsole();
  const [typedActor, setTypedActor] = useState('');
  const [actor, setActor] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const id = typedActor.trim();
    if (id !== '' && !isUuid(id)) {
      setInvalid(`"${id}" is not an admin's user id`);
      return;
    }
    setInvalid(null);
    setActor(id);
  };

  const load = useCallback(
    async (query: TableQuery, signal: AbortSignal) => {
      if (query.search && !isUuid(query.search))
        throw new Error(
          `"${query.search}" is not a user id: search by the id of the user whose resource it was`,
        );
      return client.admin.actions.listPage(
        {
          ...(actor && { actor }),
          ...(query.search && { owner: query.search }),
          ...pageOf(query),
        },
        { signal },
      );
    },
    [client, actor],
  );

  return (
    <>
      <PageHeading>Audit trail</PageHeading>
      <p>Every action an administrator took, oldest first, with the reason they gave.</p>
      <form className="filters" onSubmit={apply}>
        <div>
          <label htmlFor="audit-actor">Actor</label>
          <input
            id="audit-actor"
            value={typedActor}
            aria-describedby="audit-actor-hint"
            onChange={(event) => setTypedActor(event.target.value)}
          />
        </div>
        <button type="submit">Filter</button>
        <p id="audit-actor-hint" className="hint">
          The user id of an administrator: only their actions.
        </p>
      </form>
      <ErrorMessage error={invalid} />
      <DataTable
        caption="Admin actions"
        columns={COLUMNS}
        load={load}
        rowId={(action) => action.id}
        searchHint="The id of a user: only actions on their resources (their owner)."
        empty="No admin action matches."
      />
    </>
  );
}
