import { loadConfig, runMain } from '@payments/service-kit';
import { ProviderSandboxConfigSchema } from './config.js';
import { startProviderSandbox } from './service.js';

runMain('provider-sandbox', async () => startProviderSandbox(loadConfig(ProviderSandboxConfigSchema)));
