export * from './infrastructure.js';
export * from './databases.js';
export * from './broker.js';
export * from './tokens.js';
export * from './ports.js';
export * from './system.js';
export * from './build.js';
export * from './tcp-proxy.js';
