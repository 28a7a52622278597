import { expect } from 'chai';
import { ConfigError, loadConfig } from '@payments/service-kit';
import { IdentityConfigSchema } from '../src/index.js';
import { loginLimits } from '../src/config.js';
import { expectRateLimited, type IdentityHarness, PASSWORD, useIdentityHarness } from './identity-harness.js';

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

const atOnce = async (n: number, attempt: (i: number) => Promise<{ status: number }>) =>
  (await Promise.all(Array.from({ length: n }, (_, i) => attempt(i)))).map((r) => r.status);

const loginOf = (identity: () => IdentityHarness) => (name: string, password: string, address: string) =>
  identity().request('POST', '/auth/login', {
    body: { identity: name, password },
    headers: { 'x-forwarded-for': address },
  });

describe('identity: the failed-login limits count failures only', function () {
  this.timeout(120_000);

  // The defaults: 10 failures per account from one address, 100 per account, 100 per address, 500 attempts per
  // address, in 15 minutes.
  const identity = useIdentityHarness();

  const login = loginOf(() => identity);

  it('lets 50 right passwords of one user through from one address at once', async () => {
    await identity.register('shared_account');
    const statuses = await atOnce(50, () => login('shared_account', PASSWORD, '198.51.100.101'));
    expect(statuses).to.deep.equal(Array(50).fill(200));
  });

  it('lets 50 users behind one address log in at once', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `office_${i}`);
    for (const name of names) await identity.register(name);
    const statuses = await atOnce(50, (i) => login(names[i] as string, PASSWORD, '198.51.100.102'));
    expect(statuses).to.deep.equal(Array(50).fill(200));
  });

  it('counts the wrong passwords in a crowd of right ones, and only those', async () => {
    const names = Array.from({ length: 45 }, (_, i) => `crowd_${i}`);
    for (const name of names) await identity.register(name);
    await identity.register('crowd_victim');
    const address = '198.51.100.103';
    const statuses = await atOnce(50, (i) =>
      i < 45 ? login(names[i] as string, PASSWORD, address) : login('crowd_victim', `guess ${i}`, address),
    );
    expect(count(statuses, 200)).to.equal(45);
    expect(count(statuses, 401)).to.equal(5);
    // Five failures were counted: five more reach the limit of ten, and the next is refused unchecked.
    const more = [];
    for (let i = 0; i < 6; i++) more.push((await login('crowd_victim', 'wrong password', address)).status);
    expect(more).to.deep.equal([401, 401, 401, 401, 401, 429]);
    expect((await login('crowd_victim', PASSWORD, address)).status).to.equal(429);
    // Only that account from that address: the crowd's other users there log in.
    expect((await login('crowd_1', PASSWORD, address)).status).to.equal(200);
  });

  it('checks no more than 10 of 40 wrong passwords sent at once for one account from one address', async () => {
    await identity.register('guessed_1');
    const statuses = await atOnce(40, (i) => login('guessed_1', `guess ${i}`, '198.51.100.104'));
    expect(count(statuses, 401)).to.equal(10);
    expect(count(statuses, 429)).to.equal(30);
    const right = await login('guessed_1', PASSWORD, '198.51.100.104');
    expectRateLimited(right);
  });

  it("does not lock the account's owner out from another address", async () => {
    await identity.register('guessed_2');
    for (let i = 0; i < 10; i++)
      expect((await login('guessed_2', `guess ${i}`, '198.51.100.105')).status).to.equal(401);
    expect((await login('guessed_2', 'guess 10', '198.51.100.105')).status).to.equal(429);
    expect((await login('guessed_2@example.com', PASSWORD, '203.0.113.105')).status).to.equal(200);
    // Nor another guesser from yet another address: each pair has an allowance of its own.
    expect((await login('guessed_2', 'guess 11', '198.51.100.106')).status).to.equal(401);
  });

  it('checks no more than 10 wrong current passwords sent at once with a stolen token', async () => {
    const victim = await identity.register('stolen_token');
    const token = await identity.login('stolen_token');
    const statuses = await atOnce(30, (i) =>
      identity.request('PUT', `/user/${victim.id}`, {
        token,
        body: { password: 'attacker password', current_password: `guess ${i}` },
        headers: { 'x-forwarded-for': '198.51.100.107' },
      }),
    );
    expect(count(statuses, 403), JSON.stringify(statuses)).to.equal(10);
    expect(count(statuses, 429)).to.equal(20);
  });
});

describe('identity: the failed-login ceilings per account and per address', function () {
  this.timeout(120_000);

  const identity = useIdentityHarness({
    LOGIN_MAX_FAILURES: '3',
    LOGIN_MAX_FAILURES_PER_ACCOUNT: '12',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '8',
  });

  const login = loginOf(() => identity);

  it('checks no more than 12 of 30 wrong passwords sent at once for one account from 30 addresses', async () => {
    await identity.register('spread_1');
    const statuses = await atOnce(30, (i) => login('spread_1', `guess ${i}`, `192.0.2.${100 + i}`));
    expect(count(statuses, 401)).to.equal(12);
    expect(count(statuses, 429)).to.equal(18);
    // The account has had its failures: a further address is refused unchecked, even with the right password.
    const right = await login('spread_1', PASSWORD, '203.0.113.200');
    expectRateLimited(right);
  });

  it('stops a guess spread over addresses at the ceiling, after each address has spent its own allowance', async () => {
    await identity.register('spread_2');
    const statuses: number[] = [];
    for (let address = 0; address < 5; address++)
      for (let i = 0; i < 4; i++)
        statuses.push((await login('spread_2', `guess ${i}`, `198.51.100.${10 + address}`)).status);
    // Three failures from each of four addresses (the fourth guess from each is refused by its pair), then none.
    expect(statuses).to.deep.equal([
      ...[401, 401, 401, 429],
      ...[401, 401, 401, 429],
      ...[401, 401, 401, 429],
      ...[401, 401, 401, 429],
      ...[429, 429, 429, 429],
    ]);
  });

  it('does not start the account over when its owner logs in, only the owner’s own pair', async () => {
    await identity.register('spread_3');
    for (let address = 0; address < 3; address++)
      for (let i = 0; i < 3; i++)
        expect((await login('spread_3', `guess ${i}`, `198.51.100.${30 + address}`)).status).to.equal(401);
    expect((await login('spread_3', 'a typo', '203.0.113.30')).status).to.equal(401);
    expect((await login('spread_3', PASSWORD, '203.0.113.30')).status).to.equal(200);
    // Ten failures were counted for the account; two more reach its ceiling of twelve, whoever logged in since.
    expect((await login('spread_3', 'guess', '198.51.100.40')).status).to.equal(401);
    expect((await login('spread_3', 'guess', '198.51.100.41')).status).to.equal(401);
    expect((await login('spread_3', 'guess', '198.51.100.42')).status).to.equal(429);
  });

  it('checks no more than 8 of 30 wrong passwords sent at once from one address for 30 accounts', async () => {
    const statuses = await atOnce(30, (i) => login(`sprayed_${i}`, 'Summer2026!', '198.51.100.60'));
    expect(count(statuses, 401)).to.equal(8);
    expect(count(statuses, 429)).to.equal(22);
    await identity.register('sprayed_owner');
    expect((await login('sprayed_owner', PASSWORD, '198.51.100.61')).status).to.equal(200);
  });
});

describe('identity: the ceiling on login attempts per address', function () {
  this.timeout(60_000);

  const identity = useIdentityHarness({ LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '20' });
  before(async () => {
    await identity.register('busy_user');
  });

  const login = (address: string) =>
    identity.request('POST', '/auth/login', {
      body: { username: 'busy_user', password: PASSWORD },
      headers: { 'x-forwarded-for': address },
    });

  it('refuses the 21st attempt from one address with 429 even with the right password; other addresses go on', async () => {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => login('198.51.100.120')));
    expect(statuses.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    const flood = await login('198.51.100.120');
    expectRateLimited(flood);
    expect((await login('198.51.100.121')).status).to.equal(200);
  });
});

describe('identity: login limits that would let one address lock an account', () => {
  it('are refused at start when LOGIN_MAX_FAILURES_PER_ACCOUNT is not above LOGIN_MAX_FAILURES', () => {
    const limits = (env: Record<string, string>) => () => loginLimits(loadConfig(IdentityConfigSchema, env));
    expect(limits({ LOGIN_MAX_FAILURES: '20', LOGIN_MAX_FAILURES_PER_ACCOUNT: '20' })).to.throw(
      ConfigError,
      /LOGIN_MAX_FAILURES_PER_ACCOUNT \(20\) must be above LOGIN_MAX_FAILURES \(20\)/,
    );
    expect(limits({ LOGIN_MAX_FAILURES: '20', LOGIN_MAX_FAILURES_PER_ACCOUNT: '21' })()).to.include({
      maxFailures: 20,
      maxFailuresPerAccount: 21,
    });
  });
});
