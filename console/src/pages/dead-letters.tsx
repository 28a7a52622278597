import { useCallback, useEffect, useState } from 'react';
import type { DeadLetterList, DeadLetterQueue } from '@payments/client';
import { DEAD_LETTER_QUEUES } from '@payments/contracts/operations';
import { DataTable, type Column, type TableQuery } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { FormDialog, ReasonField } from '../components/form-dialog.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';

interface Letter {
  id: string;
  type: string;
  eventId: string;
  body: string;
}

/** A dead letter as a row: its event's type and id where it is an event, and the body as it came. */
function letterOf(entry: DeadLetterList['data'][number], index: number): Letter {
  if ('raw' in entry) return { id: String(index), type: 'not JSON', eventId: '—', body: entry.raw };
  const event = entry.event as { id?: unknown; type?: unknown } | null;
  return {
    id: String(index),
    type: typeof event?.type === 'string' ? event.type : 'not an event',
    eventId: typeof event?.id === 'string' ? event.id : '—',
    body: JSON.stringify(entry.event, null, 2),
  };
}

const LETTER_COLUMNS: Column<Letter>[] = [
  { header: '#', cell: (letter) => Number(letter.id) + 1 },
  { header: 'Type', cell: (letter) => letter.type },
  { header: 'Event id', cell: (letter) => <span className="mono">{letter.eventId}</span> },
  {
    header: 'Body',
    cell: (letter) => (
      <details>
        <summary>Show</summary>
        <pre>{letter.body}</pre>
      </details>
    ),
  },
];

/** Dead letters: per consumer queue, how many its consumer gave up on, what they are, and a replay. */
export function DeadLettersPage() {
  const { client } = useConsole();
  const [counts, setCounts] = useState<Partial<Record<DeadLetterQueue, number>>>({});
  const [countsError, setCountsError] = useState<unknown>(null);
  const [queue, setQueue] = useState<DeadLetterQueue>(DEAD_LETTER_QUEUES[0] as DeadLetterQueue);
  const [replaying, setReplaying] = useState<DeadLetterQueue | null>(null);
  const [reason, setReason] = useState('');
  const [replayed, setReplayed] = useState<string | null>(null);
  const [changes, setChanges] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    Promise.all(
      DEAD_LETTER_QUEUES.map(async (name) => {
        const list = await client.admin.deadLetters.list(name, { limit: 1 }, { signal: abort.signal });
        return [name, list.count] as const;
      }),
    ).then(
      (found) => setCounts(Object.fromEntries(found)),
      (failure: unknown) => {
        if (!abort.signal.aborted) setCountsError(failure);
      },
    );
    return () => abort.abort();
  }, [client, changes]);

  const load = useCallback(
    async (query: TableQuery, signal: AbortSignal) => {
      const list = await client.admin.deadLetters.list(queue, { limit: 100 }, { signal });
      const needle = query.search.toLowerCase();
      const letters = list.data
        .map(letterOf)
        .filter(
          (letter) =>
            !needle || `${letter.type} ${letter.eventId} ${letter.body}`.toLowerCase().includes(needle),
        );
      return { data: letters, has_more: false };
    },
    [client, queue],
  );

  return (
    <>
      <PageHeading>Dead letters</PageHeading>
      <p>
        Events a consumer gave up on. Replaying moves them back onto their queue, where the consumer takes
        each once (it recognises one it has already applied).
      </p>
      <ErrorMessage error={countsError} />
      {replayed && <p role="status">{replayed}</p>}
      <div className="table-scroll">
        <table>
          <caption>Queues</caption>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" className="number">
                Dead letters
              </th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {DEAD_LETTER_QUEUES.map((name) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td className="number">{counts[name] ?? '…'}</td>
                <td>
                  <div className="actions">
                    <button
                      type="button"
                      className="secondary"
                      aria-pressed={queue === name}
                      onClick={() => setQueue(name)}
                    >
                      Show<span className="visually-hidden"> the dead letters of {name}</span>
                    </button>
                    <button
                      type="button"
                      disabled={!counts[name]}
                      onClick={() => {
                        setReason('');
                        setReplaying(name);
                      }}
                    >
                      Replay<span className="visually-hidden"> the dead letters of {name}</span>
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Dead letters of {queue}</h2>
      <DataTable
        key={queue}
        caption={`Dead letters of ${queue}, oldest first (at most 100)`}
        columns={LETTER_COLUMNS}
        load={load}
        rowId={(letter) => letter.id}
        reloadKey={changes}
        searchHint="Matches an event's type, its id or anything in its body."
        empty="This queue holds no dead letter."
      />
      {replaying && (
        <FormDialog
          title={`Replay the dead letters of ${replaying}`}
          submitLabel="Replay"
          onClose={() => setReplaying(null)}
          onSubmit={async () => {
            const result = await client.admin.deadLetters.replay(replaying, {
              ...(reason.trim() && { reason: reason.trim() }),
            });
            setReplayed(
              `Replayed ${result.replayed} dead letter${result.replayed === 1 ? '' : 's'} of ${result.queue}.`,
            );
            setChanges((count) => count + 1);
          }}
        >
          <p>Every dead letter {replaying} holds now goes back onto its queue.</p>
          <ReasonField id="replay-reason" value={reason} onChange={setReason} />
        </FormDialog>
      )}
    </>
  );
}
