export * from './common.js';
export * from './problem.js';
export * from './users.js';
export * from './accounts.js';
export * from './money.js';
export * from './currencies.js';
export * from './webhooks.js';
export * from './reconciliation.js';
