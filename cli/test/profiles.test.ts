import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runPayments } from '@payments/testkit';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  userAgent: string | undefined;
}

const USER_ID = '5b0c8d0e-2f1a-4b7c-9d3e-6a7b8c9d0e1f';
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token shaped like the gateway's (a JWT whose `sub` the CLI reads), naming the environment that issued it. */
const tokenFrom = (environment: string) =>
  `${base64url({ alg: 'HS256' })}.${base64url({ sub: USER_ID, exp: Math.floor(Date.now() / 1000) + 900 })}.${environment}`;

/** One environment's API, as far as login, whoami and logout go: it issues its own token and records each request. */
async function startEnvironment(name: string) {
  const seen: Seen[] = [];
  const server: Server = createServer((request: IncomingMessage, response) => {
    request.resume();
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        userAgent: request.headers['user-agent'],
      });
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.url === '/v1.1/auth/login')
        return json(200, { token: tokenFrom(name), token_type: 'Bearer', expires_in: 900 });
      if (request.url === '/v1.1/auth/logout') return response.writeHead(204).end();
      if (request.url === `/v1.1/user/${USER_ID}`)
        return json(200, {
          id: USER_ID,
          username: `alice-at-${name}`,
          email: 'alice@example.com',
          role: 'user',
        });
      json(404, { type: 'about:blank', title: 'Not Found', status: 404, code: 'NOT_FOUND' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `--profile` / `PAYMENTS_PROFILE`: each environment its own API URL and its own saved session, so that logging in
 * to staging neither replaces production's token nor sends it to staging.
 */
describe('payments profiles: one API URL and one session per environment', function () {
  this.timeout(60_000);
  let home: string;
  let production: Awaited<ReturnType<typeof startEnvironment>>;
  let staging: Awaited<ReturnType<typeof startEnvironment>>;
  const payments = (args: string[], env: Record<string, string> = {}) =>
    runPayments(args, { XDG_CONFIG_HOME: home, PAYMENTS_PASSWORD: 'pw-12345', ...env });

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'payments-profiles-'));
    [production, staging] = await Promise.all([startEnvironment('production'), startEnvironment('staging')]);
  });
  after(async () => {
    await Promise.all([production?.close(), staging?.close()]);
    await rm(home, { recursive: true, force: true });
  });

  it('keeps each profile’s API URL and session apart, and sends each token only to its own API', async () => {
    expect((await payments(['config', 'set', 'api-url', production.url])).code).to.equal(0);
    expect((await payments(['--profile', 'staging', 'config', 'set', 'api-url', staging.url])).code).to.equal(
      0,
    );

    const loginProduction = await payments(['login', '--username', 'alice']);
    expect(loginProduction.stdout).to.match(/^Logged in as alice\./);
    const loginStaging = await payments(['login', '--username', 'alice'], { PAYMENTS_PROFILE: 'staging' });
    expect(loginStaging.code).to.equal(0);
    expect(production.seen.filter((r) => r.url === '/v1.1/auth/login')).to.have.length(1);
    expect(staging.seen.filter((r) => r.url === '/v1.1/auth/login')).to.have.length(1);

    const whoProduction = await payments(['whoami']);
    const whoStaging = await payments(['whoami', '--profile', 'staging']);
    expect(whoProduction.stdout).to.match(/^alice-at-production </);
    expect(whoStaging.stdout).to.match(/^alice-at-staging </);
    // Which environment issued each bearer token sent (its last segment names it).
    const issuers = (seen: Seen[]) => [
      ...new Set(seen.filter((r) => r.authorization).map((r) => r.authorization?.split('.').at(-1))),
    ];
    expect(issuers(production.seen)).to.deep.equal(['production']);
    expect(issuers(staging.seen)).to.deep.equal(['staging']);

    // Each session is its own file, a credential: 0600, in a 0700 directory.
    const root = join(home, 'payments');
    for (const file of [join(root, 'session.json'), join(root, 'profiles/staging/session.json')])
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
    expect((await stat(join(root, 'profiles/staging'))).mode & 0o777).to.equal(0o700);
  });

  it('logging out of one profile leaves the other logged in', async () => {
    const logout = await payments(['logout'], { PAYMENTS_PROFILE: 'staging' });
    expect(logout.stdout).to.equal('Logged out.\n');
    expect((await payments(['whoami', '--profile', 'staging'])).code).to.equal(3);
    const stillProduction = await payments(['whoami']);
    expect(stillProduction.code).to.equal(0);
    expect(stillProduction.stdout).to.match(/^alice-at-production </);
  });

  it('--profile wins over PAYMENTS_PROFILE; config get names the profile; config profiles lists them', async () => {
    const got = await payments(['config', 'get', '--profile', 'staging'], { PAYMENTS_PROFILE: 'default' });
    expect(got.stdout).to.equal(`profile = staging\napi-url = ${staging.url}\noutput = text\n`);
    const listed = await payments(['config', 'profiles', '--json']);
    expect(JSON.parse(listed.stdout)).to.deep.equal({
      data: [
        { profile: 'default', current: true, api_url: production.url, login: 'alice', session: 'active' },
        { profile: 'staging', current: false, api_url: staging.url, login: null, session: 'none' },
      ],
    });
  });

  it('refuses a profile name that could leave the state directory, and writes nothing', async () => {
    for (const name of ['../evil', 'a/b', '.hidden', '']) {
      const run = await payments(['--profile', name, 'config', 'set', 'output', 'json']);
      expect(run.code, name).to.equal(2);
      expect(run.stderr).to.include('is not a profile name');
    }
    const evil = await payments(['config', 'get'], { PAYMENTS_PROFILE: '../../x' });
    expect(evil.code).to.equal(2);
    expect(await readdir(join(home, 'payments/profiles'))).to.deep.equal(['staging']);
    expect(await readdir(home)).to.deep.equal(['payments']);
  });

  it('says who is calling: User-Agent payments-cli/<version> payments-client/<version> node/<version>', () => {
    const agents = new Set([...production.seen, ...staging.seen].map((r) => r.userAgent));
    expect([...agents]).to.have.length(1);
    expect([...agents][0]).to.match(
      /^payments-cli\/\d+\.\d+\.\d+ payments-client\/\d+\.\d+\.\d+ node\/\d+\.\d+\.\d+$/,
    );
  });
});
