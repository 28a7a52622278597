import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Static } from '@sinclair/typebox';
import type { TransactionTimelineView } from '@payments/contracts';
import { useStarted } from '@payments/testkit';
import { useLedgerHarness } from './support/ledger-harness.js';

type Timeline = Static<typeof TransactionTimelineView>;

/** A server that answers every request 500, and a port where nothing listens. */
async function startBrokenParts(): Promise<{ failingUrl: string; closedUrl: string; stop(): Promise<void> }> {
  const listen = (server: Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  const failing = createServer((_req, res) => res.writeHead(500).end('{"error":"down"}'));
  const closed = createServer();
  const failingPort = await listen(failing);
  const closedPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  return {
    failingUrl: `http://127.0.0.1:${failingPort}`,
    closedUrl: `http://127.0.0.1:${closedPort}`,
    stop: () => new Promise((resolve) => failing.close(() => resolve())),
  };
}

describe('a transaction timeline whose other parts are away (HTTP, Postgres)', function () {
  this.timeout(60_000);
  const parts = useStarted(startBrokenParts);
  const ledger = useLedgerHarness(
    {
      env: {
        get WEBHOOK_INGEST_URL() {
          return parts.failingUrl;
        },
        get WEBHOOK_DELIVERY_URL() {
          return parts.closedUrl;
        },
      },
    },
    { booksBalance: true },
  );

  it("answers the ledger's part and names the services that did not answer", async () => {
    const owner = ledger.newUser();
    const account = await ledger.openAccount(owner);
    const deposit = await ledger.deposit(owner, account.id, 12);
    expect(deposit.status).to.equal(202);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(owner, deposit.body.id, 'completed');

    const admin = ledger.newUser('admin');
    const answer = await ledger.call('GET', `/admin/transactions/${deposit.body.id}/timeline`, {
      user: admin,
    });
    expect(answer.status, answer.text).to.equal(200);
    const timeline = answer.body as Timeline;
    expect(timeline.sources).to.deep.equal({
      ledger: 'ok',
      'webhook-ingest': 'unavailable',
      'webhook-delivery': 'unavailable',
    });
    expect(timeline.entries.map((entry) => entry.kind)).to.deep.equal([
      'created',
      'status_change',
      'posting',
      'posting',
    ]);
    expect(timeline.entries[1]).to.include({ status: 'completed', summary: 'Status: pending → completed' });

    const refused = await ledger.call('GET', `/admin/transactions/${deposit.body.id}/timeline`, {
      user: owner,
    });
    expect(refused.status).to.equal(403);
  });
});
