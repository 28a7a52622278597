export * from './topology.js';
export * from './processes.js';
export * from './probe.js';
export * from './development-secrets.js';
