import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  eventually,
  useSystem,
  startTestReceiver,
  problemReply,
  startStandInProxy,
  type Action,
  DELIVERY_TO_RECEIVER,
  useStarted,
} from '@payments/testkit';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  createPaymentsClient,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  UnprocessableEntityError,
  verifyWebhookEvent,
  WEBHOOK_SIGNATURE_HEADER,
  type Account,
  type ApiVersion,
  type ClientOptions,
  type PaymentsClient,
  type Problem,
  type ResponseInfo,
  type Transaction,
} from '../src/index.js';
import { recordingFetch, registerUser, signedInClient } from './support/client-fixtures.js';

/** What a call rejects with (it must reject). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error,
  );
}

describe('@payments/client against the running system', function () {
  this.timeout(120_000);
  const system = useSystem(
    {
      serviceEnv: {
        'webhook-delivery': DELIVERY_TO_RECEIVER,
        // A fee on transfers, so that version 1.1 has one to show.
        ledger: { FEE_TRANSFER_FIXED: '0.25' },
      },
    },
    { admin: true },
  );
  const receiver = useStarted(startTestReceiver);
  const proxy = useStarted(() => startStandInProxy(system.gatewayUrl));

  afterEach(() => proxy.use(() => undefined));

  /** A signed-in client with an open USD account holding `funds` (deposited and settled). */
  async function fundedAccount<V extends ApiVersion = '1.1'>(
    funds = '100.00',
    options: Partial<ClientOptions<V>> = {},
  ) {
    const { client, user } = await signedInClient<V>(system.gatewayUrl, options);
    const account = await client.accounts.open({ currency: 'USD' });
    if (funds !== '0') {
      const deposit = await client.money.deposit(account.id, { amount: funds, currency: 'USD' });
      expect((await client.transactions.waitUntilSettled(deposit.id)).status).to.equal('completed');
    }
    return { client, user, account };
  }

  describe('sessions', () => {
    it('logs in with the credentials on the first call that needs a token, and keeps the token', async () => {
      const recorder = recordingFetch();
      const { client, user } = await signedInClient(system.gatewayUrl, { fetch: recorder.fetch });
      expect(recorder.calls).to.deep.equal([]);
      await client.accounts.open({ currency: 'USD' });
      await client.accounts.listPage();
      expect(recorder.calls.map(({ method, path }) => `${method} ${path}`)).to.deep.equal([
        'POST /auth/login',
        'POST /account',
        'GET /accounts',
      ]);
      expect((await client.users.get(user.userId)).username).to.equal(user.credentials.username);
    });

    it('logs in again after a 401 for a revoked token and sends the call once more', async () => {
      const recorder = recordingFetch();
      const { client } = await signedInClient(system.gatewayUrl, { fetch: recorder.fetch });
      await client.accounts.open({ currency: 'USD' });
      // Revoke the session's token behind its back, as a logout from elsewhere would.
      const sessionToken = recorder.calls
        .find((call) => call.path === '/account')
        ?.headers.get('authorization');
      await fetch(`${system.gatewayUrl}/auth/logout`, {
        method: 'POST',
        headers: { authorization: sessionToken as string },
      });
      await eventually(
        () => fetch(`${system.gatewayUrl}/accounts`, { headers: { authorization: sessionToken as string } }),
        (response) => response.status === 401,
      );
      recorder.calls.length = 0;
      expect((await client.accounts.listPage()).data).to.have.length(1);
      expect(recorder.calls.map(({ path, status }) => `${path} ${status}`)).to.deep.equal([
        '/accounts 401',
        '/auth/login 200',
        '/accounts 200',
      ]);
    });

    it('logs in through auth.login when given no credentials, and auth.logout ends the session', async () => {
      const { credentials } = await registerUser(system.gatewayUrl);
      const client = createPaymentsClient({ baseUrl: system.gatewayUrl });
      const token = await client.auth.login(credentials);
      expect(token).to.include({ token_type: 'Bearer' });
      expect((await client.accounts.listPage()).pagination.total).to.equal(0);
      await client.auth.logout();
      const error = await rejection(client.accounts.listPage());
      expect(error).to.be.instanceOf(Error).and.not.be.instanceOf(AuthenticationError);
      expect((error as Error).message).to.match(/no usable token/i);
      const stale = createPaymentsClient({ baseUrl: system.gatewayUrl, token: token.token });
      const refused = await rejection(stale.accounts.listPage());
      expect(refused).to.be.instanceOf(AuthenticationError);
      expect(refused).to.include({ status: 401, code: 'AUTH_REQUIRED' });
    });
  });

  describe('money operations and idempotency', () => {
    it('sends a generated Idempotency-Key with each operation: two deposits are two transactions', async () => {
      const recorder = recordingFetch();
      const { client } = await signedInClient(system.gatewayUrl, { fetch: recorder.fetch });
      const account = await client.accounts.open({ currency: 'USD' });
      const first = await client.money.deposit(account.id, { amount: '5.00', currency: 'USD' });
      const second = await client.money.deposit(account.id, { amount: '5.00', currency: 'USD' });
      expect(first.id).to.not.equal(second.id);
      const keys = recorder.calls
        .filter(({ path }) => path.endsWith('/deposit'))
        .map(({ headers }) => headers.get('idempotency-key'));
      expect(keys).to.have.length(2);
      expect(keys[0]).to.match(/^[0-9a-f-]{36}$/);
      expect(keys[1])
        .to.match(/^[0-9a-f-]{36}$/)
        .and.not.equal(keys[0]);
    });

    it('sends the caller’s key as given: the same key again replays the first transaction', async () => {
      const { client, account } = await fundedAccount('0');
      const idempotencyKey = `order-${randomUUID()}`;
      const answers: ResponseInfo[] = [];
      const onResponse = (info: ResponseInfo) => answers.push(info);
      const first = await client.money.deposit(
        account.id,
        { amount: '12.34', currency: 'USD' },
        { idempotencyKey, onResponse },
      );
      const again = await client.money.deposit(
        account.id,
        { amount: '12.34', currency: 'USD' },
        { idempotencyKey, onResponse },
      );
      expect(again.id).to.equal(first.id);
      expect(answers.map(({ headers }) => headers.get('idempotent-replayed'))).to.deep.equal([null, 'true']);
      expect(answers[0]?.headers.get('location')).to.equal(`/v1.1/transaction/${first.id}`);
      const conflict = await rejection(
        client.money.deposit(account.id, { amount: '99.00', currency: 'USD' }, { idempotencyKey }),
      );
      expect(conflict).to.be.instanceOf(ConflictError);
      expect(conflict).to.include({ status: 409, code: 'CONFLICT' });
    });

    it('retries a deposit whose answer was lost with the same key: the money moves once', async () => {
      const { user, account } = await fundedAccount('0');
      const client = createPaymentsClient({
        baseUrl: proxy.url,
        credentials: user.credentials,
        retryBaseDelayMs: 50,
      });
      let lost = 0;
      // The gateway takes the deposit, the answer is lost on the way back (504 from the network).
      proxy.use((request) =>
        request.url.endsWith('/deposit') && lost++ === 0
          ? { forwardThenReply: problemReply(504, 'SERVICE_UNAVAILABLE') }
          : undefined,
      );
      const answers: ResponseInfo[] = [];
      const deposit = await client.money.deposit(
        account.id,
        { amount: '40.00', currency: 'USD' },
        { onResponse: (info) => answers.push(info) },
      );
      const sent = proxy.seen((request) => request.url.endsWith('/deposit'));
      expect(sent).to.have.length(2);
      expect(sent[1]?.headers['idempotency-key']).to.equal(sent[0]?.headers['idempotency-key']);
      expect(sent[1]?.headers['x-request-id']).to.equal(sent[0]?.headers['x-request-id']);
      expect(answers[0]).to.include({ status: 202, attempts: 2 });
      expect(answers[0]?.headers.get('idempotent-replayed')).to.equal('true');
      const history = await client.transactions.history(account.id).toArray();
      expect(history.map(({ id }) => id)).to.deep.equal([deposit.id]);
      expect((await client.transactions.waitUntilSettled(deposit.id)).status).to.equal('completed');
      expect((await client.balances.get(account.id)).balance).to.equal(40);
    });

    it('withdraws and transfers, each with its key; a withdrawal beyond the funds is INSUFFICIENT_FUNDS', async () => {
      const { client, account } = await fundedAccount('50.00');
      const other = await client.accounts.open({ currency: 'USD' });
      const transfer = await client.money.transfer(account.id, {
        amount: '10.00',
        currency: 'USD',
        to_account_id: other.id,
      });
      expect(transfer).to.include({ type: 'transfer', status: 'pending', fee: 0.25 });
      expect((await client.transactions.waitUntilSettled(transfer.id)).status).to.equal('completed');
      expect((await client.balances.get(other.id)).balance).to.equal(10);
      await client.payoutAccount.link();
      expect((await client.payoutAccount.get()).provider).to.equal('stripe');
      const withdrawal = await client.money.withdraw(account.id, { amount: '5.00', currency: 'USD' });
      expect(withdrawal).to.include({ type: 'withdrawal', status: 'pending' });
      const refused = await rejection(
        client.money.withdraw(account.id, { amount: '1000.00', currency: 'USD' }),
      );
      expect(refused).to.be.instanceOf(UnprocessableEntityError);
      expect(refused).to.include({ status: 422, code: 'INSUFFICIENT_FUNDS' });
    });
  });

  describe('retries', () => {
    let client: PaymentsClient<'1.1'>;
    before(async () => {
      const { user } = await signedInClient(system.gatewayUrl);
      client = createPaymentsClient({
        baseUrl: proxy.url,
        credentials: user.credentials,
        retryBaseDelayMs: 50,
        retryMaxDelayMs: 200,
        maxRetries: 3,
      });
      await client.accounts.open({ currency: 'USD' });
    });

    const reads = () => proxy.seen((request) => request.url.startsWith('/v1.1/accounts'));

    it('retries a read after 502, 503, 504 and a dropped connection, then answers', async () => {
      const failures: Action[] = [
        { reply: problemReply(502, 'SERVICE_UNAVAILABLE') },
        { reply: problemReply(503, 'SERVICE_UNAVAILABLE') },
        { reply: problemReply(504, 'SERVICE_UNAVAILABLE') },
        'reset',
      ];
      let n = 0;
      proxy.use((request) => (request.url.startsWith('/v1.1/accounts') ? failures[n++] : undefined));
      const before = reads().length;
      let info: ResponseInfo | undefined;
      const page = await client.accounts.listPage(
        {},
        { maxRetries: 4, onResponse: (answer) => (info = answer) },
      );
      expect(page.data).to.have.length(1);
      expect(reads().length - before).to.equal(5);
      expect(info?.attempts).to.equal(5);
      const ids = new Set(
        reads()
          .slice(before)
          .map((request) => request.headers['x-request-id']),
      );
      expect(ids.size, 'one request id for the call and its retries').to.equal(1);
    });

    it('stops after maxRetries with the last error: status, code and request id', async () => {
      proxy.use((request) =>
        request.url.startsWith('/v1.1/accounts')
          ? { reply: problemReply(503, 'SERVICE_UNAVAILABLE', { 'x-request-id': 'stand-in-id' }) }
          : undefined,
      );
      const before = reads().length;
      const error = await rejection(client.accounts.listPage({}, { maxRetries: 2 }));
      expect(error).to.be.instanceOf(ServiceUnavailableError);
      expect(error).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'stand-in-id' });
      expect(reads().length - before).to.equal(3);
    });

    it('does not retry a write that carries no Idempotency-Key', async () => {
      const opens = () =>
        proxy.seen((request) => request.url === '/v1.1/account' && request.method === 'POST');
      proxy.use((request) =>
        request.method === 'POST' && request.url === '/v1.1/account'
          ? { reply: problemReply(503, 'SERVICE_UNAVAILABLE') }
          : undefined,
      );
      const before = opens().length;
      const error = await rejection(client.accounts.open({ currency: 'EUR' }));
      expect(error).to.be.instanceOf(ServiceUnavailableError);
      expect(opens().length - before).to.equal(1);
    });

    it('does not retry a 500, which may have done something', async () => {
      proxy.use((request) =>
        request.url.startsWith('/v1.1/accounts') ? { reply: problemReply(500, 'INTERNAL_ERROR') } : undefined,
      );
      const before = reads().length;
      const error = await rejection(client.accounts.listPage());
      expect(error).to.include({ status: 500, code: 'INTERNAL_ERROR' });
      expect(reads().length - before).to.equal(1);
    });

    it('after a 429, waits as long as Retry-After says, in seconds or as a date', async () => {
      for (const retryAfterOf of [() => '1', () => new Date(Date.now() + 2_000).toUTCString()]) {
        const retryAfter = retryAfterOf();
        let n = 0;
        proxy.use((request) =>
          request.url.startsWith('/v1.1/accounts') && n++ === 0
            ? { reply: problemReply(429, 'RATE_LIMIT_EXCEEDED', { 'retry-after': retryAfter }) }
            : undefined,
        );
        const before = reads().length;
        await client.accounts.listPage();
        const [limited, retried] = reads().slice(before);
        expect(retried, `a retry after Retry-After: ${retryAfter}`).to.not.equal(undefined);
        expect((retried?.at ?? 0) - (limited?.at ?? 0)).to.be.at.least(900);
      }
    });

    it('after a 429 with only the RateLimit header, waits for the exhausted policy’s reset', async () => {
      let n = 0;
      proxy.use((request) =>
        request.url.startsWith('/v1.1/accounts') && n++ === 0
          ? {
              reply: problemReply(429, 'RATE_LIMIT_EXCEEDED', {
                'ratelimit-policy': '"address";q=5;w=2, "user";q=1000;w=60',
                ratelimit: '"address";r=0;t=1, "user";r=990;t=60',
              }),
            }
          : undefined,
      );
      const before = reads().length;
      await client.accounts.listPage();
      const [limited, retried] = reads().slice(before);
      expect((retried?.at ?? 0) - (limited?.at ?? 0)).to.be.within(950, 3_000);
    });

    it('answers a 429 at once when its Retry-After would end past the call’s timeout', async () => {
      proxy.use((request) =>
        request.url.startsWith('/v1.1/accounts')
          ? { reply: problemReply(429, 'RATE_LIMIT_EXCEEDED', { 'retry-after': '60' }) }
          : undefined,
      );
      const started = Date.now();
      const error = await rejection(client.accounts.listPage({}, { timeoutMs: 5_000 }));
      expect(error).to.be.instanceOf(RateLimitError);
      expect((error as RateLimitError).headers.get('retry-after')).to.equal('60');
      expect(Date.now() - started).to.be.below(1_000);
    });

    it('ends a call that does not finish within its timeout, retries included', async () => {
      proxy.use((request) => (request.url.startsWith('/v1.1/accounts') ? 'hang' : undefined));
      const started = Date.now();
      const error = await rejection(client.accounts.listPage({}, { timeoutMs: 700 }));
      expect(error).to.be.instanceOf(RequestTimeoutError);
      expect(Date.now() - started).to.be.within(650, 2_000);
    });

    it('stops when the caller’s AbortSignal aborts, in flight or while waiting to retry', async () => {
      proxy.use((request) => (request.url.startsWith('/v1.1/accounts') ? 'hang' : undefined));
      const inFlight = await rejection(client.accounts.listPage({}, { signal: AbortSignal.timeout(300) }));
      expect(inFlight).to.have.property('name', 'TimeoutError');
      proxy.use((request) =>
        request.url.startsWith('/v1.1/accounts')
          ? { reply: problemReply(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '10' }) }
          : undefined,
      );
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('the user gave up')), 300);
      const started = Date.now();
      const waiting = await rejection(client.accounts.listPage({}, { signal: controller.signal }));
      expect(waiting).to.have.property('message', 'the user gave up');
      expect(Date.now() - started).to.be.below(2_000);
    });

    it('reports a gateway that cannot be reached as a ConnectionError after its retries', async () => {
      const unreachable = createPaymentsClient({
        baseUrl: 'http://127.0.0.1:9',
        maxRetries: 1,
        retryBaseDelayMs: 10,
      });
      const error = await rejection(unreachable.currencies.default());
      expect(error).to.be.instanceOf(ConnectionError);
    });
  });

  describe('errors', () => {
    it('turns a 404 into NotFoundError with the code, the problem body and the request id', async () => {
      const { client } = await signedInClient(system.gatewayUrl);
      const error = (await rejection(client.transactions.get(randomUUID()))) as NotFoundError;
      expect(error).to.be.instanceOf(NotFoundError);
      expect(error).to.include({ status: 404, code: 'RESOURCE_NOT_FOUND' });
      expect(error.problem).to.include({ status: 404, code: 'RESOURCE_NOT_FOUND' });
      expect(error.requestId).to.match(/^[0-9a-f-]{36}$/);
      const mine = (await rejection(
        client.accounts.get(randomUUID(), { headers: { 'X-Request-Id': 'my-request-1' } }),
      )) as NotFoundError;
      expect(mine.requestId).to.equal('my-request-1');
    });

    it('exposes the field errors of a 422 and of a 400', async () => {
      const { client, account } = await fundedAccount('0');
      const invalid = (await rejection(
        client.money.deposit(account.id, { amount: '10.505', currency: 'USD' }),
      )) as UnprocessableEntityError;
      expect(invalid).to.be.instanceOf(UnprocessableEntityError);
      expect(invalid).to.include({ status: 422, code: 'INVALID_AMOUNT' });
      expect(invalid.fieldErrors.map(({ field }) => field)).to.deep.equal(['amount']);
      const badRequest = (await rejection(client.transactions.listPage({ limit: 1000 }))) as BadRequestError;
      expect(badRequest).to.be.instanceOf(BadRequestError);
      expect(badRequest.code).to.equal('VALIDATION_ERROR');
      expect(badRequest.fieldErrors.map(({ field }) => field)).to.include('limit');
    });

    it('turns another user’s account into PermissionDeniedError (403)', async () => {
      const { account } = await fundedAccount('0');
      const { client: stranger } = await signedInClient(system.gatewayUrl);
      const error = await rejection(stranger.accounts.get(account.id));
      expect(error).to.be.instanceOf(PermissionDeniedError);
      expect(error).to.include({ status: 403, code: 'ACCESS_DENIED' });
    });
  });

  describe('lists', () => {
    it('iterates every transaction across pages with for await, newest first', async () => {
      const { client, user, account } = await fundedAccount('0');
      const made: string[] = [];
      for (const amount of ['1.00', '2.00', '3.00', '4.00', '5.00']) {
        made.push((await client.money.deposit(account.id, { amount, currency: 'USD' })).id);
      }
      const recorder = recordingFetch();
      const paging = createPaymentsClient({
        baseUrl: system.gatewayUrl,
        credentials: user.credentials,
        fetch: recorder.fetch,
      });
      const seen: string[] = [];
      for await (const transaction of paging.transactions.list({ limit: 2, account_id: account.id })) {
        seen.push(transaction.id);
      }
      expect(seen).to.deep.equal([...made].reverse());
      expect(recorder.calls.filter(({ path }) => path === '/transactions')).to.have.length(3);
      const history = await client.transactions.history(account.id, { limit: 3, type: 'deposit' }).toArray();
      expect(history.map(({ id }) => id)).to.deep.equal([...made].reverse());
      const pages = [];
      for await (const page of client.transactions.history(account.id, { limit: 4 }).pages())
        pages.push(page);
      expect(pages.map((page) => page.data.length)).to.deep.equal([4, 1]);
      expect(pages[0]?.pagination).to.deep.equal({ limit: 4, offset: 0, total: 5 });
    });

    it('iterates accounts and the currency catalogue (pages of up to 200)', async () => {
      const { client } = await signedInClient(system.gatewayUrl);
      for (const currency of ['USD', 'EUR', 'GBP']) await client.accounts.open({ currency });
      const currencies = (await client.accounts.list({ limit: 2 }).toArray()).map(({ currency }) => currency);
      expect(currencies.sort()).to.deep.equal(['EUR', 'GBP', 'USD']);
      const catalogue = await client.currencies.list().toArray();
      const { pagination } = await client.currencies.listPage({ limit: 1 });
      expect(catalogue).to.have.length(pagination.total);
      expect(new Set(catalogue.map(({ code }) => code)).size).to.equal(pagination.total);
    });
  });

  describe('versions', () => {
    it('answers in the client’s version: 1.0 without the 1.1 fields, 1.1 with fee and conversion', async () => {
      const { client: v11, user } = await fundedAccount('30.00');
      const [usd] = await v11.accounts.list().toArray();
      const eur = await v11.accounts.open({ currency: 'EUR' });
      const transfer = await v11.money.transfer(usd?.id as string, {
        amount: '10.00',
        currency: 'USD',
        to_account_id: eur.id,
      });
      await v11.transactions.waitUntilSettled(transfer.id);
      const v10 = createPaymentsClient({
        baseUrl: system.gatewayUrl,
        apiVersion: '1.0',
        credentials: user.credentials,
      });
      expect(v10.apiVersion).to.equal('1.0');
      const seenBy10 = await v10.transactions.get(transfer.id);
      const seenBy11 = await v11.transactions.get(transfer.id);
      expect(seenBy10).to.not.have.any.keys('fee', 'exchange_rate', 'converted_amount');
      expect(seenBy11).to.include({ fee: 0.25 });
      expect(seenBy11.exchange_rate).to.be.a('number');
      expect(seenBy11.converted_amount).to.be.a('number');
      // The types follow: a 1.0 transaction has no `fee` to read, a 1.1 one always has.
      // @ts-expect-error -- `fee` does not exist in version 1.0
      expect(seenBy10.fee).to.equal(undefined);
      const fee: number = seenBy11.fee;
      expect(fee).to.equal(0.25);
      const inHistory: Transaction<'1.0'>[] = await v10.transactions.history(usd?.id as string).toArray();
      expect(inHistory.every((transaction) => !('fee' in transaction))).to.equal(true);
    });
  });

  describe('statements and balances', () => {
    it('reads a statement as JSON pages, as entries and as one CSV, and the balance at a moment', async () => {
      const { client, account } = await fundedAccount('10.00');
      const from = new Date(Date.now() - 60_000).toISOString();
      for (const amount of ['1.00', '2.00', '3.00']) {
        const deposit = await client.money.deposit(account.id, { amount, currency: 'USD' });
        await client.transactions.waitUntilSettled(deposit.id);
      }
      const middle = new Date();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const last = await client.money.deposit(account.id, { amount: '4.00', currency: 'USD' });
      await client.transactions.waitUntilSettled(last.id);
      const page = await client.statements.get(account.id, { from, limit: 2 });
      expect(page).to.include({ opening_balance: 0, has_more: true });
      const entries = [];
      for await (const entry of client.statements.entries(account.id, { from, limit: 2 }))
        entries.push(entry);
      expect(entries.map(({ amount }) => amount)).to.deep.equal([10, 1, 2, 3, 4]);
      const csv = await client.statements.csv(account.id, { from, limit: 2 });
      const rows = csv.trim().split('\r\n');
      expect(rows[0]).to.equal(
        'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency,reference,metadata',
      );
      expect(rows.filter((row) => row.startsWith('created_at'))).to.have.length(1);
      expect(rows.slice(1).map((row) => row.split(',')[3])).to.deep.equal([
        'opening_balance',
        'deposit',
        'deposit',
        'deposit',
        'deposit',
        'deposit',
        'closing_balance',
      ]);
      expect(rows.at(-1)?.split(',')[6]).to.equal('20.00');
      expect(await client.balances.at(account.id, middle)).to.include({ balance: 16, currency: 'USD' });
      expect(await client.balances.get(account.id)).to.include({ balance: 20, available_balance: 20 });
    });
  });

  describe('currencies and rates', () => {
    it('reads the catalogue and the rates without a token', async () => {
      const client = createPaymentsClient({ baseUrl: system.gatewayUrl });
      expect((await client.discovery.versions()).versions).to.deep.equal(['1.0', '1.1']);
      expect((await client.currencies.get('chf')).name).to.equal('Swiss Franc');
      expect((await client.currencies.default()).code).to.equal('USD');
      expect(await client.currencies.isSupported('USD')).to.deep.equal({ code: 'USD', supported: true });
      expect((await client.currencies.supported()).data.map(({ code }) => code)).to.include('EUR');
      expect((await client.currencies.search('franc')).data.map(({ code }) => code)).to.include('CHF');
      expect((await client.currencies.region('europe')).data.map(({ code }) => code)).to.include('EUR');
      expect((await client.currencies.statistics()).total).to.be.above(100);
      expect((await client.rates.list({ base: 'USD' })).base).to.equal('USD');
      expect(await client.rates.get('USD', 'EUR')).to.include({ from: 'USD', to: 'EUR' });
      expect((await client.auth.signingKeys()).keys[0]).to.have.property('kid');
      expect(await rejection(client.currencies.get('XYZ'))).to.be.instanceOf(NotFoundError);
    });
  });

  describe('webhook endpoints', () => {
    it('registers an endpoint, and each delivery verifies with its secret, through a rotation', async () => {
      const { client, account } = await fundedAccount('0', { apiVersion: '1.0' });
      const path = `/hooks/${randomUUID()}`;
      const endpoint = await client.webhookEndpoints.create({
        url: `${receiver.url}${path}`,
        events: ['transaction.completed'],
      });
      expect(endpoint.api_version).to.equal('1.0');
      const deposit = await client.money.deposit(account.id, { amount: '7.00', currency: 'USD' });
      const [call] = await eventually(
        async () => receiver.calls(path),
        (calls) => calls.length > 0,
      );
      const header = call?.headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()] as string;
      const event = await verifyWebhookEvent<'1.0'>(call?.body as string, header, endpoint.secret);
      expect(event).to.include({ type: 'transaction.completed', api_version: '1.0' });
      if (event.type !== 'transaction.completed') return expect.fail(event.type);
      expect(event.data.object).to.include({ id: deposit.id, status: 'completed', amount: 7 });
      expect(event.data.object).to.not.have.property('fee');

      const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id, { grace_period_seconds: 600 });
      expect(rotated.secret).to.not.equal(endpoint.secret);
      const second = await client.money.deposit(account.id, { amount: '8.00', currency: 'USD' });
      const delivered = await eventually(
        async () => receiver.calls(path).find((received) => received.body.includes(second.id)),
        (found) => found !== undefined,
      );
      const signature = delivered?.headers['stripe-signature'] as string;
      for (const secrets of [endpoint.secret, rotated.secret, [rotated.secret, endpoint.secret]]) {
        expect((await verifyWebhookEvent(delivered?.body as string, signature, secrets)).id).to.be.a(
          'string',
        );
      }

      const deliveries = await client.webhookEndpoints.deliveries.list(endpoint.id).toArray();
      expect(deliveries).to.have.length(2);
      const detail = await client.webhookEndpoints.deliveries.get(endpoint.id, deliveries[0]?.id as string);
      expect(detail.attempt_log.length).to.be.at.least(1);
      await eventually(
        () => client.webhookEndpoints.deliveries.get(endpoint.id, deliveries[0]?.id as string),
        (found) => found.status === 'succeeded',
      );
      const again = await client.webhookEndpoints.deliveries.redeliver(
        endpoint.id,
        deliveries[0]?.id as string,
      );
      expect(again.id).to.equal(deliveries[0]?.id);
      expect((await client.webhookEndpoints.get(endpoint.id)).previous_secret_expires_at).to.be.a('string');
      expect((await client.webhookEndpoints.update(endpoint.id, { enabled: false })).enabled).to.equal(false);
      expect(await client.webhookEndpoints.list().toArray()).to.have.length(1);
      await client.webhookEndpoints.delete(endpoint.id);
      expect(await rejection(client.webhookEndpoints.get(endpoint.id))).to.be.instanceOf(NotFoundError);
    });
  });

  describe('raw requests', () => {
    it('answers any request with its status, in the client’s version, with the session’s token', async () => {
      const { client, user } = await signedInClient(system.gatewayUrl);
      const account = await client.accounts.open({ currency: 'USD' });
      // Not JSON: the gateway's 400 is the answer, not an error.
      const malformed = await client.rawRequest<Problem>('POST', '/account', {
        rawBody: '{"currency": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(malformed.status, malformed.text).to.equal(400);
      expect(malformed.body).to.include({ code: 'VALIDATION_ERROR', instance: '/v1.1/account' });
      expect(malformed.headers.get('x-api-version')).to.equal('1.1');

      const read = await client.rawRequest<Account>('GET', `/account/${account.id}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.include({ id: account.id, user_id: user.userId });
      // A path with a version, or versioned: false, goes as written (unprefixed is 1.0).
      for (const [path, versioned, served] of [
        [`/v1.0/account/${account.id}`, true, '1.0'],
        [`/account/${account.id}`, false, '1.0'],
      ] as const) {
        const answer = await client.rawRequest('GET', path, { versioned });
        expect(answer.status, path).to.equal(200);
        expect(answer.headers.get('x-api-version'), path).to.equal(served);
      }
      const anonymous = await client.rawRequest<Problem>('GET', '/accounts', { auth: false });
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body?.code).to.equal('AUTH_REQUIRED');
      expect((await client.rawRequest('GET', '/health', { versioned: false })).status).to.equal(200);
    });
  });

  describe('users and admin routes', () => {
    it('updates a user with If-Match from the ETag, refuses a stale one, and deletes with confirmation', async () => {
      const { client, user } = await signedInClient(system.gatewayUrl);
      let etag = '';
      await client.users.get(user.userId, {
        onResponse: ({ headers }) => (etag = headers.get('etag') ?? ''),
      });
      expect(etag).to.match(/^"/);
      const renamed = `${user.credentials.username}_x`;
      expect(
        (await client.users.update(user.userId, { username: renamed }, { ifMatch: etag })).username,
      ).to.equal(renamed);
      const stale = await rejection(
        client.users.update(user.userId, { username: `${renamed}y` }, { ifMatch: etag }),
      );
      expect(stale).to.be.instanceOf(ConflictError);
      await client.users.delete(user.userId, { confirm: true });
      expect(
        await rejection(client.auth.login({ username: renamed, password: user.credentials.password })),
      ).to.include({
        status: 401,
        code: 'INVALID_CREDENTIALS',
      });
    });

    it('lets an admin disable a user and read the reconciliation, the trail and the overdrawn accounts', async () => {
      const admin = createPaymentsClient({
        baseUrl: system.gatewayUrl,
        credentials: { username: system.admin.username, password: system.admin.password },
      });
      const { client, user } = await signedInClient(system.gatewayUrl);
      await client.accounts.listPage();
      expect((await admin.admin.users.setStatus(user.userId, { status: 'disabled' })).status).to.equal(
        'disabled',
      );
      expect(await rejection(client.auth.login(user.credentials))).to.include({
        status: 403,
        code: 'ACCESS_DENIED',
      });
      // A run the ledger started on its own answers 409 until it ends.
      const run = await eventually(
        () => admin.admin.reconciliation.run().catch((error: unknown) => error),
        (answer) => !(answer instanceof ConflictError),
      );
      expect(run).to.have.property('checked').that.is.a('number');
      const waiting = await admin.admin.reconciliation.list().toArray();
      expect(waiting).to.be.an('array');
      expect(await admin.admin.reconciliation.csv()).to.match(/^kind,case_id,status,transaction_id/);
      expect(await admin.admin.actions.list().toArray()).to.be.an('array');
      expect(await admin.admin.overdrawnAccounts.list().toArray()).to.be.an('array');
      expect(await rejection(admin.admin.reconciliation.getCase(randomUUID()))).to.be.instanceOf(
        NotFoundError,
      );
      const { client: notAdmin } = await signedInClient(system.gatewayUrl);
      expect(await rejection(notAdmin.admin.actions.listPage())).to.be.instanceOf(PermissionDeniedError);
    });
  });
});
