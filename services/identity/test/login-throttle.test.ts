import { expect } from 'chai';
import { PASSWORD, startIdentityHarness, type IdentityHarness } from './identity-harness.js';

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('identity: the failed-login limit counts failures only', function () {
  this.timeout(120_000);
  let identity: IdentityHarness;

  before(async () => {
    // The defaults: 10 failures per account and per address, 500 attempts per address, in 15 minutes.
    identity = await startIdentityHarness();
  });
  after(async () => {
    await identity?.stop();
  });

  const login = (name: string, password: string, address: string) =>
    identity.request('POST', '/auth/login', {
      body: { identity: name, password },
      headers: { 'x-forwarded-for': address },
    });
  const atOnce = async (n: number, attempt: (i: number) => Promise<{ status: number }>) =>
    (await Promise.all(Array.from({ length: n }, (_, i) => attempt(i)))).map((r) => r.status);

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
    const address = '198.51.100.103';
    const statuses = await atOnce(50, (i) =>
      i < 45 ? login(names[i] as string, PASSWORD, address) : login(`crowd_${i}`, 'wrong password', address),
    );
    expect(count(statuses, 200)).to.equal(45);
    expect(count(statuses, 401)).to.equal(5);
    // Five failures were counted: five more reach the limit of ten, and the next is refused unchecked.
    const more = [];
    for (let i = 0; i < 6; i++) more.push((await login('crowd_0', 'wrong password', address)).status);
    expect(more).to.deep.equal([401, 401, 401, 401, 401, 429]);
    expect((await login('crowd_1', PASSWORD, address)).status).to.equal(429);
  });

  it('checks no more than 10 of 40 wrong passwords sent at once for one account from one address', async () => {
    await identity.register('guessed_1');
    const statuses = await atOnce(40, (i) => login('guessed_1', `guess ${i}`, '198.51.100.104'));
    expect(count(statuses, 401)).to.equal(10);
    expect(count(statuses, 429)).to.equal(30);
    const right = await login('guessed_1', PASSWORD, '198.51.100.105');
    expect(right.status).to.equal(429);
    expect(right.body.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(Number(right.headers.get('retry-after'))).to.be.within(1, 900);
  });

  it('checks no more than 10 of 40 wrong passwords sent at once for one account from 40 addresses', async () => {
    await identity.register('guessed_2');
    const statuses = await atOnce(40, (i) => login('guessed_2', `guess ${i}`, `192.0.2.${100 + i}`));
    expect(count(statuses, 401)).to.equal(10);
    expect(count(statuses, 429)).to.equal(30);
  });

  it('checks no more than 10 of 40 wrong passwords sent at once from one address for 40 accounts', async () => {
    const statuses = await atOnce(40, (i) => login(`sprayed_${i}`, 'Summer2026!', '198.51.100.106'));
    expect(count(statuses, 401)).to.equal(10);
    expect(count(statuses, 429)).to.equal(30);
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
    expect(count(statuses, 403)).to.equal(10);
    expect(count(statuses, 429)).to.equal(20);
  });
});

describe('identity: the ceiling on login attempts per address', function () {
  this.timeout(60_000);
  let identity: IdentityHarness;

  before(async () => {
    identity = await startIdentityHarness({ LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '20' });
    await identity.register('busy_user');
  });
  after(async () => {
    await identity?.stop();
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
    expect(flood.status).to.equal(429);
    expect(flood.body.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(Number(flood.headers.get('retry-after'))).to.be.within(1, 900);
    expect((await login('198.51.100.121')).status).to.equal(200);
  });
});
