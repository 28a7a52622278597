export { startGateway, type GatewayDeps } from './service.js';
export { GatewayConfigSchema, type GatewayConfig } from './config.js';
export { ROUTES, PUBLIC_ROUTES } from './domain/route-table.js';
