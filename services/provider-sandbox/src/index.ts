export { startProviderSandbox } from './service.js';
export { ProviderSandboxConfigSchema, type ProviderSandboxConfig } from './config.js';
