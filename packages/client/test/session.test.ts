import { expect } from 'chai';
import { useSystem } from '@payments/testkit';
import { createPaymentsClient, type PaymentsClient } from '../src/index.js';
import { recordingFetch, registerUser, type RecordedCall } from './support/client-fixtures.js';

/** The shortest lifetime identity allows (TOKEN_TTL_SECONDS ≥ 30). */
const TOKEN_TTL_SECONDS = 30;
const sequence = (calls: RecordedCall[]) =>
  calls.map(({ method, path, status }) => `${method} ${path} ${status}`);

describe('@payments/client sessions and rate limits, against the running system', function () {
  this.timeout(180_000);
  /** A client whose clock stands still from its login on: it never sees its token age. */
  let stopped: { client: PaymentsClient; calls: RecordedCall[]; loggedInAt: number };

  const system = useSystem({
    serviceEnv: {
      identity: { TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS) },
      gateway: {
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_ADDRESS_POINTS: '30',
        RATE_LIMIT_ADDRESS_WINDOW_SECONDS: '3',
      },
    },
  });

  before(async () => {
    // Logged in now, so that its token has expired by the time its test runs (the tests between take their time).
    const { credentials } = await registerUser(system.gatewayUrl);
    const recorder = recordingFetch();
    const frozen = Date.now();
    const client = createPaymentsClient({
      baseUrl: system.gatewayUrl,
      credentials,
      clock: () => frozen,
      fetch: recorder.fetch,
    });
    await client.accounts.open({ currency: 'USD' });
    stopped = { client, calls: recorder.calls, loggedInAt: Date.now() };
  });

  /** A new user's client with a USD account, recording its calls, on a clock `skew` ms ahead of the machine's. */
  const onSkewedClock = async () => {
    const { credentials } = await registerUser(system.gatewayUrl);
    const recorder = recordingFetch();
    const clock = { skew: 0 };
    const client = createPaymentsClient({
      baseUrl: system.gatewayUrl,
      credentials,
      clock: () => Date.now() + clock.skew,
      fetch: recorder.fetch,
    });
    await client.accounts.open({ currency: 'USD' });
    return { client, recorder, clock };
  };

  it('refreshes the token before it expires, once however many calls wait for it', async () => {
    const { client, recorder, clock } = await onSkewedClock();
    // 20 s on: past the refresh point (half of a 30 s lifetime, shorter than the 60 s margin), not yet expired.
    clock.skew = 20_000;
    recorder.calls.length = 0;
    const pages = await Promise.all(Array.from({ length: 5 }, () => client.accounts.listPage()));
    expect(pages.every((page) => page.data.length === 1)).to.equal(true);
    expect(recorder.calls.filter(({ path }) => path === '/auth/refresh')).to.have.length(1);
    expect(sequence(recorder.calls)[0]).to.equal('POST /auth/refresh 200');
    expect(recorder.calls.filter(({ status }) => status === 401)).to.deep.equal([]);
    const [refresh, ...after] = recorder.calls;
    const newToken = after[0]?.headers.get('authorization');
    expect(newToken).to.be.a('string').and.not.equal(refresh?.headers.get('authorization'));
    expect(after.every(({ headers }) => headers.get('authorization') === newToken)).to.equal(true);
  });

  it('logs in again when its refresh is refused (the token was refreshed elsewhere)', async () => {
    const { client, recorder, clock } = await onSkewedClock();
    const token = recorder.calls.at(-1)?.headers.get('authorization') as string;
    const elsewhere = await fetch(`${system.gatewayUrl}/auth/refresh`, {
      method: 'POST',
      headers: { authorization: token },
    });
    expect(elsewhere.status).to.equal(200);
    clock.skew = 20_000;
    recorder.calls.length = 0;
    expect((await client.accounts.listPage()).data).to.have.length(1);
    expect(sequence(recorder.calls)).to.deep.equal([
      'POST /auth/refresh 401',
      'POST /auth/login 200',
      'GET /accounts 200',
    ]);
  });

  it('sends a call once more after a 401 for an expired token, with a new login', async () => {
    const expiredAt = stopped.loggedInAt + (TOKEN_TTL_SECONDS + 1) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiredAt - Date.now())));
    stopped.calls.length = 0;
    expect((await stopped.client.accounts.listPage()).data).to.have.length(1);
    expect(sequence(stopped.calls)).to.deep.equal([
      'GET /accounts 401',
      'POST /auth/login 200',
      'GET /accounts 200',
    ]);
  });

  it('waits out the gateway’s 429s as its Retry-After says, so that every call of a burst succeeds', async () => {
    const recorder = recordingFetch();
    const client = createPaymentsClient({ baseUrl: system.gatewayUrl, fetch: recorder.fetch, maxRetries: 6 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.currencies.default()));
    expect(answers.every(({ code }) => code === 'USD')).to.equal(true);
    const limited = recorder.calls.filter(({ status }) => status === 429);
    expect(limited.length, 'calls the gateway refused with 429').to.be.greaterThan(0);
    for (const refused of limited) {
      const retryAfter = Number(refused.answer?.get('retry-after'));
      expect(retryAfter, 'Retry-After').to.be.within(1, 3);
      expect(refused.answer?.get('ratelimit')).to.match(/"address";r=0;t=\d+/);
      const id = refused.headers.get('x-request-id');
      const next = recorder.calls.find(
        (call) => call.at > refused.at && call.headers.get('x-request-id') === id,
      );
      expect(next, 'the retry of a refused call').to.not.equal(undefined);
      expect((next?.at ?? 0) - refused.at).to.be.at.least(retryAfter * 1000 - 50);
    }
  });
});
