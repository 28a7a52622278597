import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  eventually,
  auditOf,
  expectBooksBalance,
  systemBalance,
  type AuditReport,
  useSystem,
} from '@payments/testkit';
import { type PaymentsClient } from '@payments/client';
import {
  rawApi,
  signUp as signUpAt,
  type ApiResponse,
  providerEvent,
  postProviderEvent,
} from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';
import { inPool, sleep } from './support/concurrency.js';

const HOLD_EXPIRY_SECONDS = 3;
const V1_1 = { 'x-api-version': '1.1' };
/** Long enough for a duplicate or late event to (wrongly) land before a test checks nothing changed. */
const SETTLE_MS = 750;

interface Owner {
  token: string;
  userId: string;
  client: PaymentsClient<'1.1'>;
}

/** Money in minor units of a currency with `exponent` decimals, from a JSON number of major units. */
const minor = (amount: number, exponent = 2) => Math.round(amount * 10 ** exponent);

const unclaimedTotal = (report: AuditReport) =>
  report.system_balances
    .filter((account) => account.code === 'unclaimed_funds')
    .reduce((sum, account) => sum + BigInt(account.balance), 0n);

describe('money attacks end to end: no value created, none lost', function () {
  this.timeout(180_000);
  let openapi: OpenApiValidator;

  const system = useSystem(
    {
      serviceEnv: {
        // A 0.5 % deposit fee: small pieces are where half-up rounding used to let it vanish.
        ledger: {
          HOLD_EXPIRY_SECONDS: String(HOLD_EXPIRY_SECONDS),
          DEPOSIT_EXPIRY_SECONDS: String(HOLD_EXPIRY_SECONDS),
          HOLD_SWEEP_INTERVAL_MS: '200',
          FEE_DEPOSIT_PERCENT: '0.5',
        },
        // The test plays the payment provider, late answers included.
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
      },
    },
    { admin: true },
  );
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });

  afterEach(async () => {
    const report = await expectBooksBalance(system.urls.ledger);
    expect(unclaimedTotal(report), 'money moved to unclaimed funds').to.equal(0n);
  });

  const signUp = async (): Promise<Owner> => {
    const { token, userId, client } = await signUpAt(system.gatewayUrl);
    return { token, userId, client };
  };

  const openAccount = async (owner: Owner, currency = 'USD') =>
    (await owner.client.accounts.open({ currency })).id;

  const balanceOf = (owner: Owner, accountId: string) => owner.client.balances.get(accountId);

  const settled = (owner: Owner, transactionId: string) =>
    eventually(
      () => owner.client.transactions.get(transactionId),
      (transaction) => transaction.status !== 'pending',
      { timeoutMs: 20_000 },
    );

  /** A signed provider webhook, as the provider sends it; answered 200 once recorded and published. */
  const deliver = async (event: object) => {
    const response = await postProviderEvent(api, event, system.webhookSecret);
    expect(response.status, response.text).to.equal(200);
  };

  const post = (owner: Owner, path: string, body: object) => api.post(path, body, owner.token, V1_1);

  /** Deposits and has the provider confirm it; resolves with the amount credited (the deposit less its fee). */
  const fund = async (owner: Owner, accountId: string, amount: number, currency = 'USD', exponent = 2) => {
    const accepted = await owner.client.money.deposit(accountId, { amount, currency });
    await deliver(
      providerEvent('payment_intent.succeeded', accepted.id, minor(amount, exponent), currency.toLowerCase()),
    );
    expect((await settled(owner, accepted.id)).status).to.equal('completed');
    return amount - accepted.fee;
  };

  const transfer = (owner: Owner, from: string, to: string, amount: number, currency = 'USD') =>
    post(owner, `/account/${from}/transfer`, { amount, currency, to_account_id: to });

  describe('FX and fee rounding', () => {
    /** A decimal string as an exact fraction. */
    const fraction = (text: string) => {
      const [whole, decimals = ''] = text.split('.');
      return { num: BigInt(`${whole}${decimals}`), den: 10n ** BigInt(decimals.length) };
    };

    it('gains nothing from twenty 0.01 USD transfers to JPY and back (FX cycling)', async () => {
      const attacker = await signUp();
      const dollars = await openAccount(attacker, 'USD');
      const yen = await openAccount(attacker, 'JPY');
      const funded = await fund(attacker, dollars, 1);
      expect(funded).to.equal(0.99);
      // The table's USD → JPY rate: each JPY is worth 1 / rate USD.
      const rates = await api.get('/api/currencies/rates?base=USD');
      const jpyPerUsd = fraction(rates.body.rates.JPY as string);
      /** The attacker's holdings in USD cents × the JPY rate, exactly. */
      const scaledValue = async () => {
        const [usd, jpy] = await Promise.all([balanceOf(attacker, dollars), balanceOf(attacker, yen)]);
        return BigInt(minor(usd.balance)) * jpyPerUsd.num + BigInt(jpy.balance) * 100n * jpyPerUsd.den;
      };
      const fxValue = (report: AuditReport) =>
        systemBalance(report, 'fx', 'USD') * jpyPerUsd.num +
        systemBalance(report, 'fx', 'JPY') * 100n * jpyPerUsd.den;
      const start = await scaledValue();
      const fxStart = fxValue(await auditOf(system.urls.ledger));

      const outs = await inPool(
        Array.from({ length: 20 }, (_, i) => i),
        5,
        () => transfer(attacker, dollars, yen, 0.01),
      );
      for (const out of outs) {
        expect(out.status, out.text).to.equal(202);
        // 0.01 × 157.21 = 1.5721 JPY: half up credited 2 (40 JPY for 0.20 USD); rounded down it is 1.
        expect(out.body.converted_amount).to.equal(1);
      }
      for (const out of outs) expect((await settled(attacker, out.body.id)).status).to.equal('completed');
      expect((await balanceOf(attacker, yen)).balance).to.equal(20);
      expect((await scaledValue()) <= start, 'value after the transfers out').to.equal(true);

      const back = await transfer(attacker, yen, dollars, 20, 'JPY');
      expect(back.status, back.text).to.equal(202);
      expect((await settled(attacker, back.body.id)).status).to.equal('completed');
      // 20 JPY at the served rate (1 / 157.21, rounded down) is 0.1272 USD → 0.12.
      expect(back.body.converted_amount).to.equal(0.12);
      expect(await balanceOf(attacker, dollars)).to.include({ balance: 0.91, available_balance: 0.91 });
      expect((await balanceOf(attacker, yen)).balance).to.equal(0);
      expect((await scaledValue()) < start, 'value after the round trip').to.equal(true);

      // A single yen converts to less than a cent: refused, nothing moves.
      const dust = await transfer(attacker, yen, dollars, 1, 'JPY');
      expect(dust.status, dust.text).to.equal(422);
      expect(dust.body.code).to.equal('INVALID_AMOUNT');
      // The FX system account paid for nothing: what the user lost in rounding, it kept.
      expect(fxValue(await auditOf(system.urls.ledger)) >= fxStart, 'FX account value').to.equal(true);
    });

    it('never charges less fee for a deposit split into pieces than for the whole', async () => {
      const splitter = await signUp();
      const account = await openAccount(splitter);
      const whole = await post(splitter, `/account/${account}/deposit`, { amount: 9.9, currency: 'USD' });
      expect(whole.status, whole.text).to.equal(202);
      // 0.5 % of 9.90 is 0.0495 → 0.05.
      expect(whole.body.fee).to.equal(0.05);
      const pieces = await inPool(
        Array.from({ length: 10 }, (_, i) => i),
        5,
        () => post(splitter, `/account/${account}/deposit`, { amount: 0.99, currency: 'USD' }),
      );
      // 0.5 % of 0.99 is 0.00495: half up made it 0, so ten pieces paid no fee at all.
      for (const piece of pieces) expect(piece.body.fee, piece.text).to.equal(0.01);
      const revenueBefore = systemBalance(await auditOf(system.urls.ledger), 'fee_revenue', 'USD');
      for (const accepted of [whole, ...pieces]) {
        await deliver(
          providerEvent('payment_intent.succeeded', accepted.body.id, minor(accepted.body.amount)),
        );
      }
      for (const accepted of [whole, ...pieces]) {
        expect((await settled(splitter, accepted.body.id)).status).to.equal('completed');
      }
      // 9.85 for the whole, 0.98 for each piece: splitting costs more, never less.
      expect(await balanceOf(splitter, account)).to.include({ balance: 19.65, available_balance: 19.65 });
      const revenue = systemBalance(await auditOf(system.urls.ledger), 'fee_revenue', 'USD') - revenueBefore;
      expect(revenue).to.equal(15n);
    });
  });

  describe('expiry: a payout handed to the provider is never released by a timer', () => {
    const awaitingGauge = async () => {
      const { text } = await rawApi(system.urls.ledger).get('/metrics', system.serviceToken);
      const line = text.split('\n').find((l) => l.startsWith('ledger_withdrawals_awaiting_reconciliation'));
      expect(line, 'the gauge is exported').to.be.a('string');
      return Number(line?.split(' ').pop());
    };

    const reconciliation = async (token = system.admin.token) => {
      const response = await api.get('/admin/reconciliation?limit=100', token);
      openapi.check('GET', '/admin/reconciliation', response);
      return response;
    };

    const flagged = async (transactionId: string) => {
      const listed = await eventually(
        () => reconciliation(),
        (response) => response.body?.data?.some((found: { id: string }) => found.id === transactionId),
        { timeoutMs: (HOLD_EXPIRY_SECONDS + 10) * 1000, intervalMs: 250 },
      );
      return listed.body.data.find((found: { id: string }) => found.id === transactionId);
    };

    /** A funded user with a withdrawal the provider has and never answered, past its hold expiry. */
    const lateWithdrawal = async (funding: number, amount: number) => {
      const owner = await signUp();
      const account = await openAccount(owner);
      const credited = await fund(owner, account, funding);
      const withdrawal = await post(owner, `/account/${account}/withdraw`, { amount, currency: 'USD' });
      expect(withdrawal.status, withdrawal.text).to.equal(202);
      const found = await flagged(withdrawal.body.id);
      expect(found).to.include({ status: 'pending', type: 'withdrawal', amount, user_id: owner.userId });
      // Past its expiry, through several sweeps: still pending, the hold still held.
      await sleep(SETTLE_MS);
      expect((await owner.client.transactions.get(withdrawal.body.id)).status).to.equal('pending');
      expect(await balanceOf(owner, account)).to.include({
        balance: credited,
        available_balance: Math.round((credited - amount) * 100) / 100,
      });
      return { owner, account, credited, id: withdrawal.body.id as string };
    };

    it('keeps it pending with its hold, visible to admins and counted, and a late payout.paid (sent twice) debits once', async () => {
      const { owner, account, credited, id } = await lateWithdrawal(50, 20);
      const listed = await reconciliation();
      expect(await awaitingGauge()).to.equal(listed.body.pagination.total);
      expect(listed.body.pagination.total).to.be.at.least(1);
      const refused = await reconciliation(owner.token);
      expect(refused.status, refused.text).to.equal(403);
      // Nor does deleting the user release it.
      const deletion = await api.delete(`/user/${owner.userId}?confirm=true`, owner.token);
      expect(deletion.status, deletion.text).to.equal(422);
      expect(deletion.body.detail).to.match(/awaiting reconciliation/);

      const paid = providerEvent('payout.paid', id, 2000);
      await deliver(paid);
      await deliver({ ...paid, id: `evt_${randomUUID()}` });
      expect((await settled(owner, id)).status).to.equal('completed');
      await sleep(SETTLE_MS);
      const after = credited - 20;
      expect(await balanceOf(owner, account)).to.include({ balance: after, available_balance: after });
      const remaining = await reconciliation();
      expect(remaining.body.data.map((found: { id: string }) => found.id)).not.to.include(id);
      expect(await awaitingGauge()).to.equal(remaining.body.pagination.total);
    });

    it('cancels a deposit nobody paid in time, and credits once, linked, a payment the provider captures after', async () => {
      const owner = await signUp();
      const account = await openAccount(owner);
      const accepted = await post(owner, `/account/${account}/deposit`, { amount: 40, currency: 'USD' });
      expect(accepted.status, accepted.text).to.equal(202);
      const expired = await settled(owner, accepted.body.id);
      expect(expired).to.include({
        status: 'canceled',
        failure_reason: 'No payment arrived in time; the deposit expired',
      });
      expect(await balanceOf(owner, account)).to.include({ balance: 0, available_balance: 0 });
      // The payer paid after all: the provider captured it. Sent twice, and as two events.
      const captured = providerEvent('payment_intent.succeeded', accepted.body.id, 4000);
      await Promise.all([
        deliver(captured),
        deliver(captured),
        deliver({ ...captured, id: `evt_${randomUUID()}` }),
      ]);
      const credit = await eventually(
        async () => (await owner.client.transactions.listPage({ type: 'reversal', limit: 100 })).data,
        (found) =>
          found.some((t) => t.original_transaction_id === accepted.body.id && t.status === 'completed'),
      );
      expect(credit).to.have.length(1);
      expect(credit[0]).to.include({ reversal_reason: 'late_payment', amount: 40 });
      await sleep(SETTLE_MS);
      // Credited as the deposit would have been: less its 0.5 % fee.
      expect(await balanceOf(owner, account)).to.include({ balance: 39.8, available_balance: 39.8 });
      expect((await owner.client.transactions.get(accepted.body.id)).status).to.equal('canceled');
    });

    it('releases the hold once on a late payout.failed (sent twice)', async () => {
      const { owner, account, credited, id } = await lateWithdrawal(10, 5);
      const failed = providerEvent('payout.failed', id, 500);
      await deliver(failed);
      await deliver({ ...failed, id: `evt_${randomUUID()}` });
      expect((await settled(owner, id)).status).to.equal('failed');
      await sleep(SETTLE_MS);
      expect(await balanceOf(owner, account)).to.include({ balance: credited, available_balance: credited });
      expect((await reconciliation()).body.data.map((found: { id: string }) => found.id)).not.to.include(id);
    });
  });

  describe('user deletion: one decision, whatever races it', () => {
    const ROUNDS = 6;

    it('either deletes the user with nothing reaching unclaimed funds, or refuses with every cent on their account', async () => {
      const sender = await signUp();
      const senderAccount = await openAccount(sender);
      await fund(sender, senderAccount, 100);
      const outcomes: string[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const leaver = await signUp();
        const account = await openAccount(leaver);
        const senderBefore = (await balanceOf(sender, senderAccount)).balance;
        const jitter = () => sleep(Math.floor(Math.random() * (round % 2 === 0 ? 150 : 30)));
        const deposits = Array.from({ length: 4 }, async () => {
          await jitter();
          const accepted = await post(leaver, `/account/${account}/deposit`, { amount: 1, currency: 'USD' });
          if (accepted.status === 202) {
            await deliver(providerEvent('payment_intent.succeeded', accepted.body.id, 100));
          }
          return accepted;
        });
        const transfers = Array.from({ length: 6 }, async () => {
          await jitter();
          return transfer(sender, senderAccount, account, 1);
        });
        const deletion = sleep(round % 3).then(() =>
          api.delete(`/user/${leaver.userId}?confirm=true`, leaver.token),
        );
        const [depositAnswers, transferAnswers, deleted] = await Promise.all([
          Promise.all(deposits),
          Promise.all(transfers),
          deletion,
        ]);
        // After the removal the account is gone (404); once identity revoked the token, 401.
        for (const answer of [...depositAnswers, ...transferAnswers]) {
          expect([202, 401, 404], answer.text).to.include(answer.status);
        }
        const accepted = (answers: ApiResponse[]) => answers.filter((answer) => answer.status === 202);
        if (deleted.status === 204) {
          outcomes.push('deleted');
          // Anything accepted before the removal would have stood in its way.
          expect(accepted(depositAnswers).map((a) => a.text)).to.deep.equal([]);
          expect(accepted(transferAnswers).map((a) => a.text)).to.deep.equal([]);
          expect((await balanceOf(sender, senderAccount)).balance).to.equal(senderBefore);
          const gone = await api.get(`/account/${account}`, system.admin.token);
          expect(gone.status, gone.text).to.equal(404);
        } else {
          outcomes.push('refused');
          expect(deleted.status, deleted.text).to.equal(422);
          for (const answer of accepted(depositAnswers)) {
            expect((await settled(leaver, answer.body.id)).status).to.equal('completed');
          }
          // A transfer completes, or (on a machine slow enough to outlast the short hold expiry) is canceled.
          const received: ApiResponse[] = [];
          for (const answer of accepted(transferAnswers)) {
            const status = (await settled(sender, answer.body.id)).status;
            expect(['completed', 'canceled']).to.include(status);
            if (status === 'completed') received.push(answer);
          }
          const credited =
            accepted(depositAnswers).reduce((sum, a) => sum + minor(a.body.amount - a.body.fee), 0) +
            received.length * 100;
          expect(minor((await balanceOf(leaver, account)).balance)).to.equal(credited);
          expect(minor((await balanceOf(sender, senderAccount)).balance)).to.equal(
            minor(senderBefore) - received.length * 100,
          );
        }
        const report = await expectBooksBalance(system.urls.ledger);
        expect(unclaimedTotal(report), `round ${round}: ${outcomes.join(', ')}`).to.equal(0n);
      }
    });
  });
});
