import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createTestDatabase, eventually, type TestDatabase } from '@payments/testkit';
import {
  createLogger,
  inboxByAgeMigration,
  inboxMigration,
  inboxPrivileges,
  openDatabase,
  processOnce,
  RETENTION_BATCH,
  startInboxRetention,
  type Knex,
  type Retention,
} from '../src/index.js';

const logger = createLogger('inbox-retention-test', 'silent');
const RETENTION_DAYS = 35;

describe('service-kit: the inbox forgets events past its retention (real Postgres, as the runtime role)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let owner: Knex;
  let runtime: Knex;
  const retentions: Retention[] = [];

  const processedDaysAgo = (eventIds: string[], days: number) =>
    owner('processed_events')
      .whereIn('event_id', eventIds)
      .update({ processed_at: owner.raw('now() - make_interval(days => ?)', [days]) });
  const remembered = async (eventIds: string[]) =>
    (await owner('processed_events').whereIn('event_id', eventIds).select('event_id'))
      .map((row: { event_id: string }) => row.event_id)
      .sort();
  const start = () => {
    const retention = startInboxRetention(runtime, { retentionDays: RETENTION_DAYS, logger });
    retentions.push(retention);
    return retention;
  };
  const nothing = async () => undefined;

  before(async () => {
    database = await createTestDatabase('inbox_retention', { roles: true });
    const roles = database.roles as { runtimeUrl: string; ownerUrl: string };
    // As deployed: migrated and granted by the owner, run as a role that holds only the inbox's declared rights.
    runtime = await openDatabase({
      url: roles.runtimeUrl,
      migrationUrl: roles.ownerUrl,
      migrations: [inboxMigration, inboxByAgeMigration],
      privileges: inboxPrivileges,
      logger,
      leastPrivilege: true,
    });
    owner = await openDatabase({
      url: roles.ownerUrl,
      migrations: [inboxMigration, inboxByAgeMigration],
      logger,
    });
  });

  afterEach(async () => {
    await Promise.all(retentions.splice(0).map((retention) => retention.stop()));
  });

  after(async () => {
    await runtime?.destroy();
    await owner?.destroy();
    await database?.drop();
  });

  it('still drops a copy of an event inside the retention after a prune ran; one older is forgotten', async () => {
    const [recent, old] = [`evt-${randomUUID()}`, `evt-${randomUUID()}`];
    for (const eventId of [recent, old])
      expect(await processOnce(runtime, 'ledger', eventId, nothing)).to.equal('processed');
    await processedDaysAgo([recent], RETENTION_DAYS - 1);
    await processedDaysAgo([old], RETENTION_DAYS + 1);

    // A pass runs as the retention starts.
    start();
    await eventually(
      () => remembered([old]),
      (found) => found.length === 0,
    );
    expect(await remembered([recent, old])).to.deep.equal([recent]);

    let effects = 0;
    const effect = async () => {
      effects += 1;
    };
    expect(await processOnce(runtime, 'ledger', recent, effect)).to.equal('duplicate');
    expect(await processOnce(runtime, 'ledger', old, effect)).to.equal('processed');
    expect(effects).to.equal(1);
  });

  it('prunes a backlog in batches of RETENTION_BATCH rows, one short statement each', async () => {
    const backlog = Array.from({ length: RETENTION_BATCH * 2 + 10 }, () => `evt-${randomUUID()}`);
    await owner('processed_events').insert(
      backlog.map((eventId) => ({
        event_id: eventId,
        consumer: 'currency',
        processed_at: owner.raw("now() - interval '40 days'"),
      })),
    );
    const deletes: string[] = [];
    const count = (query: { sql: string }) => {
      if (/^delete from processed_events/i.test(query.sql.trim())) deletes.push(query.sql);
    };
    runtime.on('query', count);
    try {
      const retention = start();
      // Joins the pass that started with it, or runs one of its own.
      await retention.runOnce();
      await eventually(
        () => remembered(backlog),
        (found) => found.length === 0,
      );
    } finally {
      runtime.off('query', count);
    }
    expect(deletes.length).to.be.within(3, 4);
  });
});
