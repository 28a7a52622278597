export { startIdentity } from './service.js';
export { IdentityConfigSchema, type IdentityConfig } from './config.js';
