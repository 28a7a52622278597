export * from './errors.js';
export * from './versions.js';
export * from './money.js';
export * from './events.js';
export * from './topology.js';
export * from './validation.js';
export * from './http/index.js';
export * from './tokens.js';
