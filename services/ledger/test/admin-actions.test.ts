import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Static } from '@sinclair/typebox';
import { createEvent, type AdminActionPage, type EventData } from '@payments/contracts';
import { eventually } from '@payments/testkit';
import { useLedgerHarness } from './support/ledger-harness.js';

describe("the trail of admin actions: every service's, kept by the ledger (HTTP, RabbitMQ, Postgres)", function () {
  this.timeout(60_000);

  const ledger = useLedgerHarness({ transport: 'amqp' });

  const announce = (data: EventData<'AdminActionTaken'>, id = randomUUID(), occurredAt = new Date()) =>
    ledger.bus
      .publish(createEvent('AdminActionTaken', data, { id, correlationId: `test-${id}`, occurredAt }))
      .then(() => id);
  const actionsOf = async (query: string) => {
    const admin = ledger.newUser('admin');
    const answer = await ledger.call('GET', `/admin/actions?limit=100&${query}`, { user: admin });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body as Static<typeof AdminActionPage>;
  };

  it('keeps an action another service announces once, however often its event arrives, with whose it was', async () => {
    const actor = randomUUID();
    const owner = randomUUID();
    const happened = new Date(Date.now() - 60_000);
    const disabled = {
      actor,
      action: 'webhook_endpoint.disable',
      subject: `webhook_endpoint:${randomUUID()}`,
      owner,
      reason: 'its receiver floods our support queue',
      detail: { enabled: { from: true, to: false } },
    };
    const id = await announce(disabled, randomUUID(), happened);
    await announce(disabled, id, happened);
    await announce({ ...disabled, action: 'webhook_endpoint.enable', reason: null }, randomUUID());

    const page = await eventually(
      () => actionsOf(`owner=${owner}`),
      (found) => found.data.length >= 2,
      { timeoutMs: 10_000 },
    );
    // The redelivery has had every chance to land twice by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { data, pagination } = await actionsOf(`owner=${owner}`);
    expect(pagination.total).to.equal(2);
    expect(data).to.deep.equal(page.data);
    expect(data[0]).to.deep.equal({
      id,
      ...disabled,
      created_at: happened.toISOString(),
    });
    expect(data[1]).to.include({ action: 'webhook_endpoint.enable', owner, actor, reason: null });
    expect(await ledger.db('admin_actions').where({ id })).to.have.length(1);
  });

  it("narrows the trail to one admin's actions or to one user's resources, and is for admins only", async () => {
    const [alice, bob] = [randomUUID(), randomUUID()];
    const [owner, other] = [randomUUID(), randomUUID()];
    const action = (actor: string, whose: string) => ({
      actor,
      action: 'user.status_change',
      subject: `user:${whose}`,
      owner: whose,
      reason: null,
      detail: { from: 'active', to: 'disabled' },
    });
    await announce(action(alice, owner));
    await announce(action(bob, owner));
    await announce(action(alice, other));
    await eventually(
      () => actionsOf(`actor=${alice}`),
      (found) => found.data.length === 2,
      { timeoutMs: 10_000 },
    );
    expect((await actionsOf(`actor=${alice}`)).data.map((a) => a.owner)).to.have.members([owner, other]);
    expect((await actionsOf(`owner=${owner}`)).data.map((a) => a.actor)).to.have.members([alice, bob]);
    expect((await actionsOf(`actor=${bob}&owner=${other}`)).data).to.deep.equal([]);

    const admin = ledger.newUser('admin');
    const malformed = await ledger.call('GET', '/admin/actions?owner=not-a-uuid', { user: admin });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.code).to.equal('VALIDATION_ERROR');
    const user = ledger.newUser();
    expect((await ledger.call('GET', `/admin/actions?owner=${user.id}`, { user })).status).to.equal(403);
  });

  it("records the ledger's own dead-letter replays before making them: who, on what, and why", async () => {
    const admin = ledger.newUser('admin');
    const replayed = await ledger.call('POST', '/admin/dead-letters/ledger/replay', {
      user: admin,
      body: { limit: 5, reason: 'the settlement bug is fixed' },
    });
    expect(replayed.status, replayed.text).to.equal(200);
    const { data } = await actionsOf(`actor=${admin.id}`);
    expect(
      data.map(({ action, subject, owner, reason, detail }) => ({ action, subject, owner, reason, detail })),
    ).to.deep.equal([
      {
        action: 'dead_letters.replay',
        subject: 'dead_letter_queue:ledger',
        owner: null,
        reason: 'the settlement bug is fixed',
        detail: { queue: 'ledger', limit: 5 },
      },
    ]);
  });
});
