import { useCallback, useState } from 'react';
import type { WebhookDelivery, WebhookEndpoint } from '@payments/client';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { formatTime, isUuid } from '../components/formatting.js';
import { FormDialog, ReasonField } from '../components/form-dialog.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';

/** Webhooks: every user's endpoints, an endpoint's deliveries, and a delivery sent again. */
export function WebhooksPage() {
  const { client } = useConsole();
  const [selected, setSelected] = useState<WebhookEndpoint | null>(null);

  const load = useCallback(
    (query: TableQuery, signal: AbortSignal) => {
      if (query.search && !isUuid(query.search))
        return Promise.reject(new Error(`"${query.search}" is not a user id`));
      return client.webhookEndpoints.listPage(
        {
          ...(query.search && { user_id: query.search }),
          ...pageOf(query),
        },
        { signal },
      );
    },
    [client],
  );

  const columns: Column<WebhookEndpoint>[] = [
    { header: 'URL', cell: (endpoint) => <span className="mono">{endpoint.url}</span> },
    { header: 'User', cell: (endpoint) => <span className="mono">{endpoint.user_id}</span> },
    { header: 'Events', cell: (endpoint) => endpoint.events.join(', ') },
    { header: 'Enabled', cell: (endpoint) => (endpoint.enabled ? 'yes' : 'no') },
    { header: 'Created', cell: (endpoint) => formatTime(endpoint.created_at) },
    {
      header: 'Deliveries',
      cell: (endpoint) => (
        <button
          type="button"
          className="secondary"
          aria-pressed={selected?.id === endpoint.id}
          onClick={() => setSelected(endpoint)}
        >
          Deliveries<span className="visually-hidden"> to {endpoint.url}</span>
        </button>
      ),
    },
  ];

  return (
    <>
      <PageHeading>Webhooks</PageHeading>
      <DataTable
        caption="Webhook endpoints"
        columns={columns}
        load={load}
        rowId={(endpoint) => endpoint.id}
        searchHint="A user id: only that user's endpoints. Empty: every user's."
        empty="No webhook endpoint."
      />
      {selected && <Deliveries endpoint={selected} />}
    </>
  );
}

function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const { client } = useConsole();
  const [again, setAgain] = useState<WebhookDelivery | null>(null);
  const [reason, setReason] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const [changes, setChanges] = useState(0);

  const load = useCallback(
    (query: TableQuery, signal: AbortSignal) =>
      client.webhookEndpoints.deliveries.listPage(endpoint.id, pageOf(query), { signal }),
    [client, endpoint.id],
  );

  const columns: Column<WebhookDelivery>[] = [
    { header: 'Event', cell: (delivery) => delivery.event_type },
    { header: 'Status', cell: (delivery) => delivery.status },
    { header: 'Attempts', cell: (delivery) => delivery.attempts },
    { header: 'Last answer', cell: (delivery) => delivery.last_status_code ?? delivery.last_error ?? '—' },
    { header: 'Created', cell: (delivery) => formatTime(delivery.created_at) },
    { header: 'Delivered', cell: (delivery) => formatTime(delivery.delivered_at) },
    {
      header: 'Actions',
      cell: (delivery) => (
        <button
          type="button"
          onClick={() => {
            setReason('');
            setAgain(delivery);
          }}
        >
          Redeliver<span className="visually-hidden"> {delivery.event_type}</span>
        </button>
      ),
    },
  ];

  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to {endpoint.url}</h2>
      {sent && <p role="status">{sent}</p>}
      <DataTable
        key={endpoint.id}
        caption={`Deliveries to ${endpoint.url}, newest first`}
        columns={columns}
        load={load}
        rowId={(delivery) => delivery.id}
        reloadKey={changes}
        searchable={false}
        empty="Nothing has been delivered to this endpoint."
      />
      {again && (
        <FormDialog
          title={`Redeliver ${again.event_type}`}
          submitLabel="Send again"
          onClose={() => setAgain(null)}
          onSubmit={async () => {
            const delivery = await client.webhookEndpoints.deliveries.redeliver(endpoint.id, again.id, {
              ...(reason.trim() && { reason: reason.trim() }),
            });
            setSent(`Sent ${delivery.event_type} again: ${delivery.status}.`);
            setChanges((count) => count + 1);
          }}
        >
          <p>The delivery is sent again now, with a fresh retry window.</p>
          <ReasonField id="redeliver-reason" value={reason} onChange={setReason} />
        </FormDialog>
      )}
    </section>
  );
}
