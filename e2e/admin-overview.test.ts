import { expect } from 'chai';
import { eventually, findInfrastructure, tapEvents, type EventTap, useSystem } from '@payments/testkit';
import { rawApi, signUpWithAccount, type ApiResponse, type Customer } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface Counts {
  created: number;
  completed: number;
  failed: number;
}
interface Activity {
  deposits: Counts;
  withdrawals: Counts;
  transfers: Counts;
  failure_rate: number | null;
  card_attempts: number;
  card_declines: number;
  decline_rate: number | null;
}
interface Overview {
  bucket_seconds: number;
  series: (Activity & { start: string })[];
  totals: Activity;
  dead_letters: { queue: string; count: number | null }[];
  queues: { queue: string; depth: number | null }[];
  outbox: { service: string; oldest_unpublished_seconds: number | null }[];
  webhook_deliveries_pending: number | null;
  provider_requests: { waiting: number } | null;
  reconciliation: { open_cases: number } | null;
  missing: { part: string; detail: string }[];
}

/**
 * GET /admin/overview through the real system (ADR 0127): the ledger counts what was just done in the bucket it was
 * done in, a declined card raises the decline rate, a dead letter shows in its queue's count, each gauge is read
 * from where it lives, and a service that is down is named as missing while the rest is answered.
 */
describe('the admin overview, end to end', function () {
  this.timeout(120_000);
  let tap: EventTap;
  let openapi: OpenApiValidator;
  let payer: Customer;

  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_DELAY_MS: '200' },
        ledger: { OVERVIEW_PART_TIMEOUT_MS: '1500' },
      },
    },
    { admin: true, beforeStop: () => tap?.close() },
  );
  const api = rawApi(system);

  before(async () => {
    tap = await tapEvents(
      (await findInfrastructure()).amqpUrl,
      system.environment('ledger').AMQP_NAMESPACE as string,
    );
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    payer = await signUpWithAccount(system.gatewayUrl);
  });

  const overview = async (window = 'hour', token = system.admin.token): Promise<ApiResponse> => {
    const response = await api.get(`/admin/overview?window=${window}`, token);
    openapi.check('GET', '/admin/overview', response);
    return response;
  };
  const read = async (window = 'hour') => {
    const response = await overview(window);
    expect(response.status, response.text).to.equal(200);
    return response.body as Overview;
  };
  const settled = (id: string) =>
    eventually(
      () => payer.client.transactions.get(id),
      (t) => t.status !== 'pending' || t.failure_reason !== null,
    );
  const deposit = async (amount: number, paymentMethod: string) => {
    const response = await api.post(
      `/account/${payer.accountId}/deposit`,
      { amount, currency: 'USD', payment_method: paymentMethod },
      payer.token,
    );
    expect(response.status, response.text).to.equal(202);
    return settled(response.body.id as string);
  };

  it('counts deposits, withdrawals and transfers in their bucket, and a declined card in the decline rate', async () => {
    const before = await read();
    expect(before.missing).to.deep.equal([]);
    expect(before.series).to.have.length(60);
    expect(before.bucket_seconds).to.equal(60);
    expect(before.totals.deposits.created).to.equal(0);
    expect(before.totals.decline_rate).to.equal(null);

    const paid = await deposit(30, 'pm_card_visa');
    expect(paid.status).to.equal('completed');
    const declined = await deposit(10, 'pm_card_chargeDeclined');
    expect(declined).to.include({ status: 'pending', failure_reason: 'Your card was declined.' });
    const withdrawal = await payer.client.money.withdraw(payer.accountId, { amount: 5, currency: 'USD' });
    const { id: savings } = await payer.client.accounts.open({ currency: 'USD' });
    const transfer = await payer.client.money.transfer(payer.accountId, {
      to_account_id: savings,
      amount: 3,
      currency: 'USD',
    });
    await settled(withdrawal.id);
    await settled(transfer.id);

    const after = await eventually(read, (o) => o.totals.withdrawals.completed === 1);
    expect(after.totals.deposits).to.deep.equal({ created: 2, completed: 1, failed: 0 });
    expect(after.totals.withdrawals).to.deep.equal({ created: 1, completed: 1, failed: 0 });
    expect(after.totals.transfers).to.deep.equal({ created: 1, completed: 1, failed: 0 });
    expect(after.totals.failure_rate).to.equal(0);
    expect(after.totals).to.include({ card_attempts: 2, card_declines: 1, decline_rate: 0.5 });

    // The paid deposit sits in the bucket of its creation, one minute wide.
    const created = new Date(paid.created_at).getTime();
    const bucket = after.series.find((b) => {
      const start = new Date(b.start).getTime();
      return start <= created && created < start + 60_000;
    });
    expect(bucket, JSON.stringify(after.series.slice(-3))).to.not.equal(undefined);
    expect(bucket!.deposits.created).to.be.at.least(1);
    expect(after.series.reduce((sum, b) => sum + b.deposits.created, 0)).to.equal(2);

    const day = await read('day');
    expect(day.series).to.have.length(96);
    expect(day.bucket_seconds).to.equal(900);
    expect(day.totals.deposits.created).to.equal(2);
  });

  it('reads each gauge where it lives: a dead letter in its queue, outbox ages, the delivery queue', async () => {
    await tap.publishRaw('payment.processed', '{"not": "an event"');
    const seen = await eventually(read, (o) => o.dead_letters.find((d) => d.queue === 'ledger')?.count === 1);
    expect(seen.dead_letters.map((d) => d.queue)).to.deep.equal(['ledger', 'currency', 'webhook-delivery']);
    expect(seen.queues.every((q) => typeof q.depth === 'number')).to.equal(true);
    expect(seen.outbox.map((o) => o.service)).to.deep.equal(['ledger', 'identity']);
    expect(seen.outbox.every((o) => typeof o.oldest_unpublished_seconds === 'number')).to.equal(true);
    expect(seen.webhook_deliveries_pending).to.be.a('number');
    expect(seen.provider_requests?.waiting).to.be.a('number');
    expect(seen.reconciliation?.open_cases).to.equal(0);
    expect(seen.missing).to.deep.equal([]);
  });

  it('refuses a user (403) and no token (401), and a bad window (400), changing nothing', async () => {
    const refused = await overview('hour', payer.token);
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body.code).to.equal('ACCESS_DENIED');
    expect(refused.body).to.not.have.property('series');
    const anonymous = await api.get('/admin/overview');
    expect(anonymous.status).to.equal(401);
    for (const query of ['window=week', 'window=', 'window=hour&extra=1']) {
      const bad = await api.get(`/admin/overview?${query}`, system.admin.token);
      expect(bad.status, query).to.equal(400);
      expect(bad.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(bad.body.code, query).to.equal('VALIDATION_ERROR');
    }
  });

  it('answers what it can reach while webhook-delivery is down, naming the part that is missing', async () => {
    await system.kill('webhook-delivery');
    try {
      const partial = await read();
      expect(partial.webhook_deliveries_pending).to.equal(null);
      expect(partial.missing.map((m) => m.part)).to.deep.equal(['webhook_deliveries']);
      // Why it failed (a refused connection to an address) is for the log, not for the answer.
      expect(partial.missing[0]?.detail).to.equal("could not be read (the ledger's log says why)");
      expect(partial.totals.deposits.created).to.equal(2);
      expect(partial.outbox.find((o) => o.service === 'identity')?.oldest_unpublished_seconds).to.be.a(
        'number',
      );
    } finally {
      await system.restart('webhook-delivery');
    }
  });
});
