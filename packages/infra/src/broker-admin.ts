import { spawn } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import amqp, { type ChannelModel } from 'amqplib';
import {
  declareTopology,
  absentQueues,
  brokerTopology,
  deadLetterQueueName,
  QUEUES,
  replayExchangeName,
  type Deployment,
} from '@payments/contracts';
import { brokerPermissionsOf, brokerUserDefinitions, type BrokerUser } from './broker-permissions.js';

/** Creating users needs more than AMQP: the management HTTP API, or rabbitmqctl on the broker's machine. */
export interface BrokerAdmin {
  via: 'management API' | 'rabbitmqctl';
  /** Creates or updates each user with its password and exactly its permissions. */
  putUsers(users: BrokerUser[], namespace: string): Promise<void>;
  deleteUsers(usernames: string[]): Promise<void>;
}

export interface BrokerAdminOptions {
  /** An administrative AMQP URL; its host, credentials and vhost are the management API's too. */
  amqpUrl: string;
  /** e.g. http://rabbitmq:15672; by default the AMQP host on 15672, tried before rabbitmqctl. */
  managementUrl?: string;
}

export const HOW_TO_ENABLE_BROKER_ADMIN =
  'Creating the per-service RabbitMQ users needs the management plugin (rabbitmq-plugins enable ' +
  'rabbitmq_management; set RABBITMQ_MANAGEMENT_URL when it is not on the AMQP host at port 15672) or, for a ' +
  'broker on this machine, rabbitmqctl run as root or as the rabbitmq user.';

const vhostOf = (amqpUrl: string) =>
  decodeURIComponent(new URL(firstBrokerNode(amqpUrl)).pathname.slice(1)) || '/';

/** The nodes an AMQP URL names: one URL, or a cluster's, comma-separated (as the services read AMQP_URL). */
export function brokerNodeUrls(amqpUrl: string): string[] {
  const nodes = amqpUrl
    .split(',')
    .map((node) => node.trim())
    .filter(Boolean);
  if (nodes.length === 0) throw new Error('the AMQP URL names no broker');
  return nodes;
}

const firstBrokerNode = (amqpUrl: string) => brokerNodeUrls(amqpUrl)[0] as string;

/** An administrative connection to the first of a cluster's nodes that answers. */
export async function connectToAnyNode(amqpUrl: string): Promise<ChannelModel> {
  const failures: string[] = [];
  for (const node of brokerNodeUrls(amqpUrl)) {
    try {
      return await amqp.connect(node);
    } catch (error) {
      failures.push(`${new URL(node).host}: ${(error as Error).message}`);
    }
  }
  throw new Error(`no broker node answers (${failures.join('; ')})`);
}

/**
 * Whether rabbitmqctl has answered in this process: each call starts an Erlang VM (about half a second of CPU), so
 * it is checked once, not before every use (the test kit provisions and removes logins for every system it starts).
 */
let rabbitmqctlAnswered = false;

/** Finds a way to manage users on the broker behind `amqpUrl`, or says what to enable. */
export async function openBrokerAdmin(options: BrokerAdminOptions): Promise<BrokerAdmin> {
  const amqpUrl = new URL(firstBrokerNode(options.amqpUrl));
  const given = options.managementUrl;
  const managementUrl = given ?? `http://${amqpUrl.host.replace(/:\d+$/, '')}:15672`;
  const auth = {
    username: decodeURIComponent(amqpUrl.username || 'guest'),
    password: decodeURIComponent(amqpUrl.password || 'guest'),
  };
  const management = managementAdmin(managementUrl, auth, vhostOf(options.amqpUrl));
  const managementError = await management.check().then(
    () => null,
    (error: unknown) => error as Error,
  );
  if (!managementError) return management;
  if (given)
    throw new Error(`The RabbitMQ management API at ${given} does not answer: ${managementError.message}`);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(amqpUrl.hostname);
  if (loopback) {
    const ctl = rabbitmqctlAdmin(vhostOf(options.amqpUrl));
    if (rabbitmqctlAnswered) return ctl;
    const ctlError = await ctl.check().then(
      () => null,
      (error: unknown) => error as Error,
    );
    if (!ctlError) {
      rabbitmqctlAnswered = true;
      return ctl;
    }
    throw new Error(
      `${HOW_TO_ENABLE_BROKER_ADMIN} Here the management API does not answer on ${managementUrl} ` +
        `(${managementError.message}) and rabbitmqctl failed (${ctlError.message.split('\n')[0]}).`,
    );
  }
  throw new Error(
    `${HOW_TO_ENABLE_BROKER_ADMIN} The management API does not answer on ${managementUrl} (${managementError.message}).`,
  );
}

function managementAdmin(
  baseUrl: string,
  auth: { username: string; password: string },
  vhost: string,
): BrokerAdmin & { check(): Promise<void> } {
  const base = new URL(baseUrl);
  const username = base.username ? decodeURIComponent(base.username) : auth.username;
  const password = base.password ? decodeURIComponent(base.password) : auth.password;
  base.username = '';
  base.password = '';
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const call = async (method: string, apiPath: string, body?: unknown, okStatuses = [200, 201, 204]) => {
    const response = await fetch(new URL(`/api/${apiPath}`, base), {
      method,
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    if (!okStatuses.includes(response.status))
      throw new Error(`${method} /api/${apiPath}: ${response.status} ${await response.text()}`);
  };
  const v = encodeURIComponent(vhost);
  return {
    via: 'management API',
    check: () => call('GET', 'whoami'),
    async putUsers(users, namespace) {
      for (const user of users) {
        const { configure, write, read, topic } = brokerPermissionsOf(user.participant, namespace);
        const name = encodeURIComponent(user.username);
        const credentials = user.password === undefined ? { password_hash: '' } : { password: user.password };
        await call('PUT', `users/${name}`, { ...credentials, tags: '' });
        await call('PUT', `permissions/${v}/${name}`, { configure, write, read });
        await call('PUT', `topic-permissions/${v}/${name}`, topic);
      }
    },
    async deleteUsers(usernames) {
      for (const name of usernames)
        await call('DELETE', `users/${encodeURIComponent(name)}`, undefined, [200, 204, 404]);
    },
  };
}

function rabbitmqctlAdmin(vhost: string): BrokerAdmin & { check(): Promise<void> } {
  const ctl = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('rabbitmqctl', ['-q', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`rabbitmqctl ${args[0]} exited with ${code}: ${stderr.trim()}`));
      });
    });
  return {
    via: 'rabbitmqctl',
    check: () => ctl(['list_vhosts']),
    async putUsers(users, namespace) {
      // One import for every user, password and permission: each rabbitmqctl call starts an Erlang VM.
      const {
        users: entries,
        permissions,
        topic_permissions,
      } = brokerUserDefinitions(users, namespace, vhost);
      await withPrivateFile(JSON.stringify({ users: entries, permissions, topic_permissions }), (file) =>
        ctl(['import_definitions', file]),
      );
    },
    async deleteUsers(usernames) {
      if (usernames.length === 0) return;
      // One VM for all of them: rabbitmqctl deletes one user a call, so `eval` runs what its delete_user runs for
      // each (a user already gone is no error, anything else fails the call). Should that fail, one call per user.
      const batch =
        'lists:foreach(fun(U) -> case catch rabbit_auth_backend_internal:delete_user(U, <<"rmq-cli">>) of ' +
        'ok -> ok; {error, {no_such_user, _}} -> ok; Other -> exit({U, Other}) end end, ' +
        `[${usernames.map(erlangBinary).join(', ')}]).`;
      const batched = await ctl(['eval', batch]).then(
        () => true,
        () => false,
      );
      if (batched) return;
      await Promise.all(
        usernames.map((name) =>
          ctl(['delete_user', name]).catch((error: Error) => {
            if (!/no_such_user|does not exist/i.test(error.message)) throw error;
          }),
        ),
      );
    },
  };
}

/** A string as an Erlang binary of its UTF-8 bytes (`<<117,115,...>>`): nothing in it needs quoting. */
const erlangBinary = (text: string) => `<<${[...Buffer.from(text, 'utf8')].join(',')}>>`;

/**
 * A file only its owner reads, for passwords on their way to rabbitmqctl. Run as root, rabbitmqctl reads files as
 * the rabbitmq user (`su rabbitmq`), so the file is handed to that user; `import_definitions -` (stdin) is
 * refused by the 3.10 CLI.
 */
async function withPrivateFile<T>(content: string, work: (file: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(path.join(tmpdir(), 'payments-broker-'));
  const file = path.join(directory, 'definitions.json');
  try {
    await writeFile(file, content, { mode: 0o600 });
    const owner = process.getuid?.() === 0 ? await systemUser('rabbitmq') : null;
    if (owner) {
      await chown(directory, owner.uid, owner.gid);
      await chown(file, owner.uid, owner.gid);
    }
    return await work(file);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function systemUser(name: string): Promise<{ uid: number; gid: number } | null> {
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  const fields = passwd
    .split('\n')
    .find((line) => line.startsWith(`${name}:`))
    ?.split(':');
  return fields ? { uid: Number(fields[2]), gid: Number(fields[3]) } : null;
}

/** What declaring a deployment's topology did about the optional queues it does not have. */
export interface TopologyChanges {
  /** Queues (and dead-letter queues) a previous deployment left, deleted with the messages they held. */
  removed: { queue: string; messages: number }[];
  /** Leftover queues kept because something still consumes them (a sandbox still running somewhere). */
  kept: { queue: string; consumers: number }[];
}

/**
 * Declares the exchanges, queues and bindings of a deployment under `namespace` with an administrative AMQP user,
 * and deletes the optional queues it does not run the consumer of (the sandbox's, where no sandbox is deployed),
 * with their dead-letter queues: what a previous deployment left there are requests nobody will answer.
 */
export async function declareBrokerTopology(
  amqpUrl: string,
  namespace: string,
  deployment: Deployment,
): Promise<TopologyChanges> {
  const topology = brokerTopology(namespace, deployment);
  const connection = await connectToAnyNode(amqpUrl);
  try {
    const channel = await connection.createChannel();
    await declareTopology(channel, topology);
    await channel.close();
    return await removeAbsentQueues(connection, namespace, deployment);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function removeAbsentQueues(
  connection: ChannelModel,
  namespace: string,
  deployment: Deployment,
): Promise<TopologyChanges> {
  const changes: TopologyChanges = { removed: [], kept: [] };
  for (const key of absentQueues(deployment)) {
    const name = namespace + QUEUES[key].name;
    const found = await inspectQueue(connection, name);
    // Never pulled from under a consumer; quorum queues refuse queue.delete's if-unused, so it is checked here.
    if (found && found.consumerCount > 0) {
      changes.kept.push({ queue: name, consumers: found.consumerCount });
      continue;
    }
    for (const queue of [name, deadLetterQueueName(name)]) {
      if (!(queue === name ? found : await inspectQueue(connection, queue))) continue;
      const channel = await connection.createChannel();
      try {
        const { messageCount } = await channel.deleteQueue(queue);
        changes.removed.push({ queue, messages: messageCount });
      } finally {
        await channel.close().catch(() => undefined);
      }
    }
    const channel = await connection.createChannel();
    try {
      // Bound to nothing once its queue is gone; deleting one that is not there is no error.
      await channel.deleteExchange(replayExchangeName(name));
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
  return changes;
}

/** A queue's counts, or null when there is no such queue (a passive check closes its channel on 404). */
async function inspectQueue(connection: ChannelModel, name: string) {
  const probe = await connection.createChannel();
  probe.on('error', () => undefined);
  try {
    return await probe.checkQueue(name);
  } catch {
    return null;
  } finally {
    await probe.close().catch(() => undefined);
  }
}
