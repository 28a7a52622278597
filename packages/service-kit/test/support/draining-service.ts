import { Type } from '@sinclair/typebox';
import {
  CommonConfig,
  createHttpApp,
  createLogger,
  createMetrics,
  loadConfig,
  PortNumber,
  resolveServiceCredential,
  runMain,
  serveHttp,
  startService,
} from '@payments/service-kit';

// A service reduced to its lifecycle, run as a process by shutdown-drain.test.ts: the kit's probes and one route.
runMain('draining-service', async () => {
  const config = loadConfig(Type.Object({ ...CommonConfig, PORT: PortNumber(0) }));
  const logger = createLogger('draining-service', config.LOG_LEVEL);
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    const app = createHttpApp(
      {
        logger,
        metrics: createMetrics('draining-service'),
        serviceCredential: resolveServiceCredential(config),
        readiness: [{ name: 'always', check: () => true }],
        shutdown,
      },
      (routes) => {
        routes.get('/work', (_req, res) => {
          res.json({ done: true });
        });
      },
    );
    const address = await serveHttp('draining-service', app, config, shutdown);
    logger.info({ url: address.url }, 'listening');
    return address;
  });
});
