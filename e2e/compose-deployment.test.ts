import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, copyFile, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parse } from 'yaml';
import { serviceDirectory, type ServiceName } from '@payments/infra';
import { DEVELOPMENT_SERVICE_TOKEN, DEVELOPMENT_WEBHOOK_SECRET } from '@payments/service-kit';

const ROOT = path.resolve(import.meta.dirname, '..');
const APP_SERVICES = [
  'identity',
  'ledger',
  'currency',
  'webhook-ingest',
  'webhook-delivery',
  'provider-sandbox',
  'gateway',
];
const WITH_DATABASE: Record<string, string> = {
  identity: 'payments_identity',
  ledger: 'payments_ledger',
  currency: 'payments_currency',
  'webhook-ingest': 'payments_webhook_ingest',
  'webhook-delivery': 'payments_webhook_delivery',
};
/** IDENTITY, WEBHOOK_INGEST…: the prefix of a service's password variables. */
const variablePrefix = (service: string) => service.toUpperCase().replaceAll('-', '_');

interface ComposeService {
  image?: string;
  build?: { context?: string; args?: Record<string, string> };
  command?: string[];
  restart?: string;
  read_only?: boolean;
  healthcheck?: { disable?: boolean };
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  networks?: Record<string, { ipv4_address?: string; aliases?: string[] } | null>;
  volumes?: string[];
  profiles?: string[];
}

/** Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`, innermost first; a missing required one throws. */
function interpolate(text: string, env: Record<string, string>): string {
  const reference = /\$\{(\w+)(?::([-?])([^${}]*))?\}/;
  let result = text;
  for (let match = reference.exec(result); match; match = reference.exec(result)) {
    const [whole, name, kind, argument] = match as unknown as [string, string, string?, string?];
    const value = env[name];
    if (!value && kind === '?') throw new Error(`${name} is required: ${argument}`);
    result = result.replace(whole, value || (kind === '-' ? (argument ?? '') : ''));
  }
  return result;
}

/** Runs infra/compose/generate-env.sh in a scratch copy of the repository, with `existing` as its .env if given. */
async function generateEnv(existing?: string) {
  const scratch = await mkdtemp(path.join(tmpdir(), 'payments-compose-'));
  try {
    await mkdir(path.join(scratch, 'infra/compose'), { recursive: true });
    await copyFile(
      path.join(ROOT, 'infra/compose/generate-env.sh'),
      path.join(scratch, 'infra/compose/generate-env.sh'),
    );
    if (existing !== undefined) await writeFile(path.join(scratch, '.env'), existing, { mode: 0o600 });
    await promisify(execFile)('bash', ['infra/compose/generate-env.sh'], { cwd: scratch });
    return {
      text: await readFile(path.join(scratch, '.env'), 'utf8'),
      mode: (await stat(path.join(scratch, '.env'))).mode & 0o777,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** KEY=value lines of a .env file; a single-quoted value is taken literally, as compose does. */
function parseDotEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match) env[match[1] as string] = (match[2] as string).replace(/^'(.*)'$/, '$1');
  }
  return env;
}

describe('docker compose runs like a least-privileged deployment (read from the files; no engine runs here)', () => {
  let envText: string;
  let dotEnv: Record<string, string>;
  let envMode: number;
  let services: Record<string, ComposeService>;
  let raw: string;
  let networks: Record<
    string,
    { internal?: boolean; ipam?: { config?: { subnet?: string; ip_range?: string }[] } }
  >;

  before(async () => {
    ({ text: envText, mode: envMode } = await generateEnv());
    dotEnv = parseDotEnv(envText);
    raw = await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    ({ services, networks } = parse(interpolate(raw, dotEnv), { merge: true }) as {
      services: Record<string, ComposeService>;
      networks: typeof networks;
    });
  });

  it('refuses to start without the generated secrets, and generate-env.sh writes every one, readable by its owner only', () => {
    expect(() => interpolate(raw, {})).to.throw(/run bash infra\/compose\/generate-env.sh first/);
    expect(envMode).to.equal(0o600);
    const { RABBITMQ_ADMIN_USER: _name, ...secrets } = dotEnv;
    for (const [name, value] of Object.entries(secrets)) expect(value, name).to.have.length.greaterThan(20);
    expect(raw).not.to.include(DEVELOPMENT_WEBHOOK_SECRET);
    expect(raw).not.to.include(DEVELOPMENT_SERVICE_TOKEN);
    // Every variable compose requires, both database roles' passwords among them.
    const required = new Set([...raw.matchAll(/\$\{(\w+):\?/g)].map((match) => match[1] as string));
    expect(Object.keys(dotEnv)).to.include.members([...required]);
    for (const name of Object.keys(WITH_DATABASE))
      for (const suffix of ['DATABASE_PASSWORD', 'DATABASE_OWNER_PASSWORD'])
        expect(required).to.include(`${variablePrefix(name)}_${suffix}`);
  });

  it('adds only the service passwords an existing .env lacks (the database owners’, say), changing nothing in it', async () => {
    const old = envText
      .split('\n')
      .filter((line) => !line.includes('_DATABASE_OWNER_PASSWORD='))
      .join('\n')
      .trimEnd(); // no newline at the end either
    const { text, mode } = await generateEnv(old);
    expect(mode).to.equal(0o600);
    expect(text.startsWith(`${old}\n`)).to.equal(true);
    const added = parseDotEnv(text.slice(old.length));
    expect(Object.keys(added)).to.have.members(
      Object.keys(WITH_DATABASE).map((name) => `${variablePrefix(name)}_DATABASE_OWNER_PASSWORD`),
    );
    for (const [name, value] of Object.entries(added)) expect(value, name).to.match(/^[0-9a-f]{48}$/);
    // A complete one is left alone.
    expect((await generateEnv(envText)).text).to.equal(envText);
  });

  it('gives every service its own database role and broker user, and only the provisioner the administrators', () => {
    const admins = [`postgres:${dotEnv.POSTGRES_PASSWORD}@`, `${dotEnv.RABBITMQ_ADMIN_USER}:`];
    for (const name of APP_SERVICES) {
      const env = services[name]?.environment ?? {};
      const amqp = new URL(String(env.AMQP_URL));
      expect(amqp.username, name).to.equal(name);
      expect(amqp.password, name).to.equal(dotEnv[`${variablePrefix(name)}_AMQP_PASSWORD`]);
      const database = WITH_DATABASE[name];
      if (database) {
        // Its runtime role, which owns nothing, with its own password.
        const url = new URL(String(env.DATABASE_URL));
        expect([url.username, url.password, url.pathname], name).to.deep.equal([
          `${database}_runtime`,
          dotEnv[`${variablePrefix(name)}_DATABASE_PASSWORD`],
          `/${database}`,
        ]);
      } else {
        expect(env.DATABASE_URL, name).to.equal(undefined);
      }
      // Never the owner's credential: the one-shot migrates (below).
      expect(env.MIGRATION_DATABASE_URL, name).to.equal(undefined);
      for (const [variable, value] of Object.entries(dotEnv))
        if (variable.endsWith('_DATABASE_OWNER_PASSWORD'))
          expect(JSON.stringify(env), `${name} ${variable}`).not.to.include(value);
      expect(
        Object.keys(env).filter((variable) => variable.endsWith('_OWNER_PASSWORD')),
        name,
      ).to.deep.equal([]);
      for (const admin of admins) expect(JSON.stringify(env), name).not.to.include(admin);
      expect(services[name]?.depends_on?.provision, name).to.deep.equal({
        condition: 'service_completed_successfully',
      });
    }
    const provision = services.provision?.environment ?? {};
    expect(String(provision.DATABASE_URL)).to.include(admins[0]);
    expect(String(provision.AMQP_URL)).to.include(admins[1]);
    // The provisioner sets both roles' passwords of each database.
    for (const name of Object.keys(WITH_DATABASE))
      for (const suffix of ['DATABASE_PASSWORD', 'DATABASE_OWNER_PASSWORD'])
        expect(provision[`${variablePrefix(name)}_${suffix}`], `${name} ${suffix}`).to.equal(
          dotEnv[`${variablePrefix(name)}_${suffix}`],
        );
  });

  it('migrates each database as its owner in a one-shot from the service’s image, which the service waits for', async () => {
    const migrations = Object.keys(services).filter((name) => name.endsWith('-migrate'));
    expect(migrations).to.have.members(Object.keys(WITH_DATABASE).map((name) => `${name}-migrate`));
    for (const [name, database] of Object.entries(WITH_DATABASE)) {
      const service = services[name] as ComposeService;
      const migrate = services[`${name}-migrate`] as ComposeService;
      expect([migrate.image, migrate.build], name).to.deep.equal([service.image, service.build]);
      expect(migrate.command, name).to.deep.equal(['node', 'dist/migrate.js']);
      const source = path.join(ROOT, serviceDirectory(name as ServiceName), 'src/migrate.ts');
      expect((await stat(source)).isFile(), source).to.equal(true);
      expect([migrate.restart, migrate.read_only, migrate.healthcheck], name).to.deep.equal([
        'no',
        true,
        { disable: true },
      ]);
      expect(migrate.ports, name).to.equal(undefined);
      expect(migrate.depends_on, name).to.deep.equal({
        provision: { condition: 'service_completed_successfully' },
      });
      const env = migrate.environment ?? {};
      // Its own database only: no broker, no service token, no administrator.
      expect(Object.keys(env), name).to.have.members([
        'NODE_ENV',
        'LOG_LEVEL',
        'DATABASE_URL',
        'MIGRATION_DATABASE_URL',
      ]);
      expect(env.NODE_ENV, name).to.equal('production');
      // The runtime role it grants to is the service's; the owner is whom it migrates as.
      expect(env.DATABASE_URL, name).to.equal(service.environment?.DATABASE_URL);
      const owner = new URL(String(env.MIGRATION_DATABASE_URL));
      expect([owner.username, owner.password, owner.host, owner.pathname], name).to.deep.equal([
        database,
        dotEnv[`${variablePrefix(name)}_DATABASE_OWNER_PASSWORD`],
        'postgres:5432',
        `/${database}`,
      ]);
      expect(service.depends_on?.[`${name}-migrate`], name).to.deep.equal({
        condition: 'service_completed_successfully',
      });
    }
    // Only the one-shots and the provisioners see an owner's password.
    const owners = Object.entries(dotEnv).filter(([variable]) =>
      variable.endsWith('_DATABASE_OWNER_PASSWORD'),
    );
    expect(owners).to.have.length(Object.keys(WITH_DATABASE).length);
    const holders = Object.entries(services)
      .filter(([, service]) => owners.some(([, password]) => JSON.stringify(service).includes(password)))
      .map(([name]) => name);
    expect(holders).to.have.members([...migrations, 'provision', 'provision-sandbox']);
  });

  it('runs in production with the sandbox as an explicit opt-in, the gateway on loopback, and trusts only the gateway’s forwarding', () => {
    for (const name of APP_SERVICES) {
      const production = name !== 'provider-sandbox';
      expect(services[name]?.environment?.NODE_ENV, name).to.equal(production ? 'production' : 'development');
      expect(services[name]?.environment?.UNSIGNED_WEBHOOK_ENABLED, name).to.equal(undefined);
    }
    expect(services['provider-sandbox']?.profiles).to.deep.equal(['sandbox']);
    // One published entry, on loopback: the edge in front of any number of gateways (no port or address of their own).
    expect(services.edge?.ports).to.deep.equal(['127.0.0.1:8080:8080']);
    expect(services.edge?.volumes).to.deep.equal([
      './infra/compose/edge-nginx.conf:/etc/nginx/nginx.conf:ro',
    ]);
    expect(services.edge?.read_only).to.equal(true);
    expect(services.gateway?.ports).to.equal(undefined);
    expect(services.gateway?.networks?.default?.ipv4_address).to.equal(undefined);
    for (const [name, service] of Object.entries(services))
      if (name !== 'edge')
        expect(service.ports?.filter((port) => !port.startsWith('127.0.0.1:')) ?? [], name).to.deep.equal([]);
    // The gateways believe the edge's forwarding only (its fixed address)…
    const edgeAddress = services.edge?.networks?.default?.ipv4_address;
    expect(edgeAddress).to.match(/^\d+\.\d+\.\d+\.\d+$/);
    expect(services.gateway?.environment?.TRUSTED_PROXIES).to.equal(edgeAddress);
    // No other container can be handed the edge's address.
    const { subnet, ip_range: range } = networks.default?.ipam?.config?.[0] ?? {};
    expect(subnet).to.equal('172.28.0.0/24');
    expect(range).to.equal('172.28.0.128/25');
    expect(edgeAddress).to.equal('172.28.0.10');
    // …and identity the gateways' only: the forwarding network holds the gateways and identity and nobody else,
    // and the gateways call identity there.
    const onForwarding = Object.entries(services)
      .filter(([, service]) => service.networks && 'forwarding' in service.networks)
      .map(([name]) => name);
    expect(onForwarding).to.have.members(['gateway', 'identity']);
    expect(services.identity?.environment?.TRUSTED_PROXIES).to.equal(
      networks.forwarding?.ipam?.config?.[0]?.subnet,
    );
    expect(networks.forwarding?.internal).to.equal(true);
    expect(services.identity?.networks?.forwarding?.aliases).to.deep.equal(['identity-for-gateways']);
    expect(services.gateway?.environment?.IDENTITY_URL).to.equal('http://identity-for-gateways:3001');
  });

  it('provisions a queue and a broker user for the sandbox only under its profile, after everything else', () => {
    const provision = services.provision as ComposeService;
    const withSandbox = services['provision-sandbox'] as ComposeService;
    expect(provision.profiles).to.equal(undefined);
    expect(provision.environment?.SANDBOX_DEPLOYED).to.equal('false');
    expect(withSandbox.profiles).to.deep.equal(['sandbox']);
    expect(withSandbox.environment?.SANDBOX_DEPLOYED).to.equal('true');
    expect([withSandbox.image, withSandbox.command]).to.deep.equal([provision.image, provision.command]);
    const { SANDBOX_DEPLOYED: _with, ...sandboxEnv } = withSandbox.environment ?? {};
    const { SANDBOX_DEPLOYED: _without, ...baseEnv } = provision.environment ?? {};
    expect(sandboxEnv).to.deep.equal(baseEnv);
    expect(withSandbox.depends_on?.provision).to.deep.equal({ condition: 'service_completed_successfully' });
    expect(services['provider-sandbox']?.depends_on?.['provision-sandbox']).to.deep.equal({
      condition: 'service_completed_successfully',
    });
  });

  it('runs the official PostgreSQL, RabbitMQ and nginx images unless told otherwise, and never takes defaults that compose v1 misreads', () => {
    expect(services.postgres?.image).to.equal('postgres:16');
    expect(services.rabbitmq?.image).to.equal('rabbitmq:3.13-management');
    expect(services.edge?.image).to.equal('nginx:1.27-alpine');
    const standIns = (
      parse(
        interpolate(raw, {
          ...dotEnv,
          POSTGRES_IMAGE: 'payments-local/postgres:15-debian',
          RABBITMQ_IMAGE: 'payments-local/rabbitmq:3.10-debian',
          EDGE_IMAGE: 'payments-local/nginx:1.22-debian',
        }),
        { merge: true },
      ) as { services: Record<string, ComposeService> }
    ).services;
    expect(standIns.postgres?.image).to.equal('payments-local/postgres:15-debian');
    // docker-compose 1.29 (what Debian bookworm has) cannot read ${A:-${B}}: none here.
    expect(raw).not.to.match(/\$\{\w+:?[-?][^}]*\$\{/);
    expect(services['provider-sandbox']?.environment?.SANDBOX_WEBHOOK_SECRET).to.equal(
      dotEnv.WEBHOOK_SECRETS,
    );
  });

  it('runs each service from its own production image: plain node on compiled code, unprivileged, read-only', async () => {
    const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    // The image that runs holds the node binary and one deploy folder; what builds it stays behind.
    expect(runtime).to.match(/^\nFROM \$\{RUNTIME_IMAGE\} AS runtime$/m);
    expect(runtime.match(/^COPY .*$/gm)).to.deep.equal([
      'COPY --from=build /usr/local/bin/node /usr/local/bin/node',
      'COPY --from=build /deploy/${SERVICE} /app',
    ]);
    expect(runtime).to.not.match(/^RUN /m);
    expect(runtime).to.match(/^USER [1-9]\d*:[1-9]\d*$/m);
    expect(runtime).to.match(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", ".*\/health/m);
    expect(runtime).to.match(/^CMD \["node", "dist\/main.js"\]$/m);
    expect(dockerfile).to.include('bash infra/deploy-folders.sh /deploy');
    // The offline build (infra/containers/, no network during the build) runs the same: only the COPY differs.
    const prebuilt = await readFile(path.join(ROOT, 'infra/containers/Dockerfile.prebuilt'), 'utf8');
    const offline = prebuilt.slice(prebuilt.lastIndexOf('\nFROM '));
    const runtimeLines = (text: string) =>
      text.split('\n').filter((line) => /^(USER|ENV|EXPOSE|HEALTHCHECK|CMD|WORKDIR| {2})/.test(line));
    expect(runtimeLines(offline)).to.deep.equal(runtimeLines(runtime));
    expect(offline.match(/^COPY .*$/gm)).to.deep.equal(['COPY . /app']);
    expect(offline).to.not.match(/^RUN /m);

    const images = new Set<string>();
    for (const name of [...APP_SERVICES, 'provision']) {
      const service = services[name] as ComposeService;
      expect(service.build?.args, name).to.deep.equal({ SERVICE: name });
      expect(service.read_only, name).to.equal(true);
      images.add(String(service.image));
      // The compiled entry point each image starts comes from a source file that exists.
      const entry = service.command ?? ['node', 'dist/main.js'];
      expect(entry.slice(0, 1), name).to.deep.equal(['node']);
      const directory = name === 'provision' ? 'packages/infra' : serviceDirectory(name as ServiceName);
      const source = path.join(
        ROOT,
        directory,
        String(entry[1])
          .replace(/^dist\//, 'src/')
          .replace(/\.js$/, '.ts'),
      );
      expect((await stat(source)).isFile(), source).to.equal(true);
    }
    expect(images.size, 'an image per service').to.equal(APP_SERVICES.length + 1);
  });
});

describe('the compose ha profile: no single node whose loss stops the system (read from the files)', () => {
  let dotEnv: Record<string, string>;
  let base: Record<string, ComposeService>;
  let ha: Record<string, ComposeService & { hostname?: string }>;
  let haRaw: string;

  before(async () => {
    dotEnv = parseDotEnv((await generateEnv()).text);
    const read = async (file: string) => readFile(path.join(ROOT, file), 'utf8');
    base = (
      parse(interpolate(await read('docker-compose.yml'), dotEnv), { merge: true }) as {
        services: Record<string, ComposeService>;
      }
    ).services;
    haRaw = await read('infra/compose/ha.yml');
    ha = (parse(interpolate(haRaw, dotEnv), { merge: true }) as { services: typeof ha }).services;
  });

  it('asks only for secrets generate-env.sh writes, and puts every service it adds in the profile ha', () => {
    const required = new Set([...haRaw.matchAll(/\$\{(\w+):\?/g)].map((match) => match[1] as string));
    expect(required).to.include.members(['POSTGRES_REPLICATION_PASSWORD', 'RABBITMQ_ERLANG_COOKIE']);
    expect(Object.keys(dotEnv)).to.include.members([...required]);
    const added = Object.keys(ha).filter((name) => !(name in base));
    expect(added).to.have.members([
      'postgres-1',
      'postgres-2',
      'etcd-1',
      'etcd-2',
      'etcd-3',
      'rabbitmq-2',
      'rabbitmq-3',
    ]);
    for (const name of added) expect(ha[name]?.profiles, name).to.deep.equal(['ha']);
  });

  it('gives every service that uses the broker all three nodes, as its own broker user', () => {
    const users = Object.entries(base).filter(([, service]) => service.environment?.AMQP_URL);
    expect(users.length).to.be.greaterThan(7);
    for (const [name, service] of users) {
      const single = new URL(String(service.environment?.AMQP_URL));
      const nodes = String(ha[name]?.environment?.AMQP_URL ?? '')
        .split(',')
        .map((url) => new URL(url));
      expect(
        nodes.map((node) => node.hostname),
        name,
      ).to.deep.equal(['rabbitmq', 'rabbitmq-2', 'rabbitmq-3']);
      for (const node of nodes) {
        expect([node.username, node.password], name).to.deep.equal([single.username, single.password]);
        expect(node.searchParams.get('heartbeat'), name).to.equal('10');
      }
    }
    // Provisioning declares the quorum queues once all three nodes run, so each has a member on every node.
    expect(ha.provision?.depends_on).to.deep.include({
      'rabbitmq-2': { condition: 'service_healthy' },
      'rabbitmq-3': { condition: 'service_healthy' },
    });
  });

  it('clusters the brokers with one cookie, pausing a node in the minority', async () => {
    const conf = await readFile(path.join(ROOT, 'infra/compose/rabbitmq-ha.conf'), 'utf8');
    expect(conf).to.match(/^cluster_partition_handling = pause_minority$/m);
    const peers = [...conf.matchAll(/^cluster_formation\.classic_config\.nodes\.\d = rabbit@(\S+)$/gm)].map(
      (match) => match[1],
    );
    expect(peers).to.deep.equal(['rabbitmq', 'rabbitmq-2', 'rabbitmq-3']);
    for (const name of ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3']) {
      expect(ha[name]?.environment?.RABBITMQ_ERLANG_COOKIE, name).to.equal(dotEnv.RABBITMQ_ERLANG_COOKIE);
      expect(ha[name]?.volumes, name).to.include(
        './infra/compose/rabbitmq-ha.conf:/etc/rabbitmq/rabbitmq.conf:ro',
      );
    }
    expect(ha['rabbitmq-2']?.hostname).to.equal('rabbitmq-2');
  });

  it('puts HAProxy where every DATABASE_URL points, following the node Patroni calls the primary, with etcd on three', async () => {
    const postgres = ha.postgres;
    expect(postgres?.command?.[0]).to.equal('haproxy');
    expect(postgres?.depends_on).to.deep.equal({
      'postgres-1': { condition: 'service_healthy' },
      'postgres-2': { condition: 'service_healthy' },
    });
    const cfg = await readFile(path.join(ROOT, 'infra/compose/haproxy.cfg'), 'utf8');
    expect(cfg).to.match(/http-check send meth GET uri \/primary/);
    expect(cfg).to.match(/on-marked-down shutdown-sessions/);
    for (const node of ['postgres-1', 'postgres-2']) {
      expect(cfg).to.match(new RegExp(`server ${node} ${node}:5432 .*check port 8008`));
      expect(ha[node]?.environment?.PATRONI_NAME).to.equal(node);
      expect(ha[node]?.environment?.PATRONI_ETCD3_HOSTS).to.equal('etcd-1:2379,etcd-2:2379,etcd-3:2379');
    }
    for (const member of ['etcd-1', 'etcd-2', 'etcd-3'])
      expect(ha[member]?.command).to.include(
        '--initial-cluster=etcd-1=http://etcd-1:2380,etcd-2=http://etcd-2:2380,etcd-3=http://etcd-3:2380',
      );
    // Every service still names `postgres`, now the failover address.
    for (const [name, service] of Object.entries(base))
      if (service.environment?.DATABASE_URL)
        expect(new URL(String(service.environment.DATABASE_URL)).host, name).to.equal('postgres:5432');
  });
});
