import { useCallback, useEffect, useState } from 'react';
import type { ChargebackExposure, OverdrawnAccount, OverdrawnReport } from '@payments/client';
import { DataTable, pageOf, type Column, type TableQuery } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { formatAmount, formatTime, shortId } from '../components/formatting.js';
import { PageHeading } from '../components/page-heading.js';
import { useConsole } from '../console-context.js';
import { Link } from '../router.js';
import { UserLink } from './transaction.js';

/** Users with an exposure the page lists, largest first (the API's most). */
const EXPOSED_USERS = 100;

const OVERDRAWN_COLUMNS: Column<OverdrawnAccount>[] = [
  { header: 'Account', cell: (account) => <span className="mono">{account.id}</span> },
  { header: 'Owner', cell: (account) => <UserLink id={account.user_id} /> },
  { header: 'Overdrawn by', cell: (account) => formatAmount(account.overdrawn_by, account.currency) },
  { header: 'Balance', cell: (account) => formatAmount(account.balance, account.currency) },
  { header: 'Since', cell: (account) => formatTime(account.updated_at) },
];

/**
 * Losses: what the platform lost and what users owe back (GET /admin/overdrawn-accounts), and what it would lose
 * if every card deposit still inside the dispute window were charged back (GET /admin/chargeback-exposure).
 */
export function LossesPage() {
  const { client } = useConsole();
  const [report, setReport] = useState<OverdrawnReport | null>(null);
  const [exposure, setExposure] = useState<ChargebackExposure | null>(null);
  const [exposureError, setExposureError] = useState<unknown>(null);

  // Every page of overdrawn accounts carries the per-currency figures and the latest losses: the table's own
  // load shows them, so the page asks once.
  const loadOverdrawn = useCallback(
    async (query: TableQuery, signal: AbortSignal) => {
      const page = await client.admin.overdrawnAccounts.listPage(pageOf(query), { signal });
      setReport(page);
      return page;
    },
    [client],
  );

  useEffect(() => {
    const abort = new AbortController();
    client.admin.chargebackExposure.get({ limit: EXPOSED_USERS }, { signal: abort.signal }).then(
      (answer) => {
        if (!abort.signal.aborted) setExposure(answer);
      },
      (failure: unknown) => {
        if (!abort.signal.aborted) setExposureError(failure);
      },
    );
    return () => abort.abort();
  }, [client]);

  return (
    <>
      <PageHeading>Losses</PageHeading>
      <section aria-labelledby="losses-by-currency">
        <h2 id="losses-by-currency">Platform losses and overdrawn accounts by currency</h2>
        {report && <LossesByCurrency report={report} />}
        {report && <PlatformLosses report={report} />}
      </section>
      <section aria-labelledby="losses-overdrawn">
        <h2 id="losses-overdrawn">Overdrawn accounts</h2>
        <p>
          Accounts a refund or a lost dispute took below zero, furthest first: nothing leaves them until
          deposits make them up.
        </p>
        <DataTable
          caption="Overdrawn accounts"
          columns={OVERDRAWN_COLUMNS}
          load={loadOverdrawn}
          rowId={(account) => account.id}
          searchable={false}
          empty="No account is overdrawn."
        />
      </section>
      <section aria-labelledby="losses-exposure">
        <h2 id="losses-exposure">Chargeback exposure</h2>
        <ErrorMessage error={exposureError} />
        {exposure && <Exposure exposure={exposure} />}
      </section>
    </>
  );
}

function LossesByCurrency({ report }: { report: OverdrawnReport }) {
  return (
    <table>
      <caption>Losses and overdrawn accounts by currency</caption>
      <thead>
        <tr>
          <th scope="col">Currency</th>
          <th scope="col" className="number">
            Platform losses
          </th>
          <th scope="col" className="number">
            Lost in all
          </th>
          <th scope="col" className="number">
            Overdrawn accounts
          </th>
          <th scope="col" className="number">
            Owed by users
          </th>
        </tr>
      </thead>
      <tbody>
        {report.by_currency.map((row) => (
          <tr key={row.currency}>
            <th scope="row">{row.currency}</th>
            <td className="number">{row.losses}</td>
            <td className="number">{formatAmount(row.losses_total, row.currency)}</td>
            <td className="number">{row.overdrawn_accounts}</td>
            <td className="number">{formatAmount(row.overdrawn_total, row.currency)}</td>
          </tr>
        ))}
        {report.by_currency.length === 0 && (
          <tr>
            <td colSpan={5}>No loss and no overdrawn account.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

function PlatformLosses({ report }: { report: OverdrawnReport }) {
  if (report.platform_losses.length === 0) return null;
  return (
    <div className="table-scroll">
      <table>
        <caption>Latest platform losses: deleted users&apos; deposits taken back, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Booked</th>
            <th scope="col">Deposit</th>
            <th scope="col">Reason</th>
            <th scope="col" className="number">
              Taken back
            </th>
            <th scope="col" className="number">
              Lost
            </th>
            <th scope="col">Provider reference</th>
          </tr>
        </thead>
        <tbody>
          {report.platform_losses.map((loss) => (
            <tr key={loss.id}>
              <td>{formatTime(loss.booked_at)}</td>
              <td>
                <Link to={`/transactions/${loss.deposit_id}`} className="mono" title={loss.deposit_id}>
                  {shortId(loss.deposit_id)}
                </Link>
              </td>
              <td>{loss.reason}</td>
              <td className="number">{formatAmount(loss.amount, loss.currency)}</td>
              <td className="number">{formatAmount(loss.loss, loss.currency)}</td>
              <td className="mono">{loss.provider_reference}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Exposure({ exposure }: { exposure: ChargebackExposure }) {
  return (
    <>
      <p>
        Card deposits completed since {formatTime(exposure.since)} (the {exposure.window_days}-day dispute
        window) whose money has left the account: what the platform would lose were they all charged back.
      </p>
      <table>
        <caption>Exposure by currency</caption>
        <thead>
          <tr>
            <th scope="col">Currency</th>
            <th scope="col" className="number">
              Exposure
            </th>
            <th scope="col" className="number">
              Users exposed
            </th>
            <th scope="col" className="number">
              Card deposits in the window
            </th>
          </tr>
        </thead>
        <tbody>
          {exposure.by_currency.map((row) => (
            <tr key={row.currency}>
              <th scope="row">{row.currency}</th>
              <td className="number">{formatAmount(row.exposure, row.currency)}</td>
              <td className="number">{row.exposed_users}</td>
              <td className="number">{formatAmount(row.deposits_in_window, row.currency)}</td>
            </tr>
          ))}
          {exposure.by_currency.length === 0 && (
            <tr>
              <td colSpan={4}>No card deposit inside the window.</td>
            </tr>
          )}
        </tbody>
      </table>
      <div className="table-scroll">
        <table>
          <caption>Exposure by user, largest first</caption>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col" className="number">
                Exposure
              </th>
              <th scope="col" className="number">
                Card deposits in the window
              </th>
              <th scope="col" className="number">
                Balance
              </th>
            </tr>
          </thead>
          <tbody>
            {exposure.data.map((row) => (
              <tr key={`${row.user_id}-${row.currency}`}>
                <td>
                  <UserLink id={row.user_id} />
                </td>
                <td className="number">{formatAmount(row.exposure, row.currency)}</td>
                <td className="number">{formatAmount(row.deposits_in_window, row.currency)}</td>
                <td className="number">{formatAmount(row.balance, row.currency)}</td>
              </tr>
            ))}
            {exposure.data.length === 0 && (
              <tr>
                <td colSpan={4}>No user has an exposure.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {exposure.has_more && (
        <p className="hint">More users have an exposure: the {exposure.data.length} largest are shown.</p>
      )}
    </>
  );
}
