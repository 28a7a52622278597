export * from './api.js';
export * from './provider-events.js';
export * from './sandbox.js';
export * from './factories/minor-units.js';
export * from './factories/transaction.js';
export * from './factories/provider-records.js';
export * from './factories/adjustment.js';
export * from './thrown.js';
