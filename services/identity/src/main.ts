import { loadConfig, runMain } from '@payments/service-kit';
import { IdentityConfigSchema } from './config.js';
import { startIdentity } from './service.js';

runMain('identity', async () => startIdentity(loadConfig(IdentityConfigSchema)));
