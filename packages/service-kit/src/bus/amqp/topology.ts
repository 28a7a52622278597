import type { ChannelModel } from 'amqplib';
import { declareTopology, type BrokerTopology } from '@payments/contracts';

/** Passive checks need no permission, so a service whose broker user may not declare can still verify. */
async function topologyIsDeclared(model: ChannelModel, topology: BrokerTopology): Promise<boolean> {
  const probe = await model.createChannel();
  // A missing exchange or queue closes the probe channel with 404; that is the answer, not an error.
  probe.on('error', () => undefined);
  try {
    for (const { name } of topology.exchanges) await probe.checkExchange(name);
    for (const { name } of topology.queues) await probe.checkQueue(name);
    return true;
  } catch {
    return false;
  } finally {
    await probe.close().catch(() => undefined);
  }
}

/**
 * Declares what is missing when this user may (an administrative user: `pnpm start`, tests). A service with
 * its own restricted user finds everything declared by the provisioner and declares nothing.
 */
export async function ensureTopology(model: ChannelModel, topology: BrokerTopology): Promise<void> {
  if (await topologyIsDeclared(model, topology)) return;
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    await declareTopology(channel, topology);
  } catch (error) {
    if (/ACCESS[-_]REFUSED/.test(String((error as Error).message))) {
      const exchanges = topology.exchanges.map(({ name }) => name).join(', ');
      throw new Error(
        `the broker topology (${exchanges} and their queues) is missing and this broker user may not declare it; ` +
          'provision the broker first (pnpm provision, or the test kit / launcher that starts the services)',
        { cause: error },
      );
    }
    throw error;
  } finally {
    await channel.close().catch(() => undefined);
  }
}
