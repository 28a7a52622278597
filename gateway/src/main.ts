import { loadConfig, runMain } from '@payments/service-kit';
import { GatewayConfigSchema } from './config.js';
import { startGateway } from './service.js';

runMain('gateway', async () => startGateway(loadConfig(GatewayConfigSchema)));
