export * from './topology.js';
export * from './processes.js';
export * from './probe.js';
export * from './broker-permissions.js';
export * from './broker-admin.js';
export * from './database-roles.js';
export * from './provisioning.js';
export * from './infra-files.js';
