export * from './api.js';
export * from './provider-events.js';
