import type { GATEWAY_OPERATIONS } from '../gateway-operations.js';
import type { OperationExamples } from '../operation.js';

/** Examples of what the gateway answers itself. */
export const GATEWAY_EXAMPLES = {
  discoverVersions: {
    response: { versions: ['1.0', '1.1'], current_version: '1.1', min_supported_version: '1.0' },
  },
  getOpenApiDocument: {
    response: {
      openapi: '3.1.0',
      info: { title: 'Payments API', version: '1.1' },
      paths: { '/accounts': { get: { operationId: 'listAccounts' } } },
    },
  },
  getApiDocumentation: {
    response:
      '<!doctype html>\n<html lang="en">\n<head><title>Payments API</title></head>\n<body>…</body>\n</html>\n',
  },
  checkHealth: { response: { status: 'ok' } },
  checkReadiness: {
    response: { status: 'ready', checks: { identity: true, ledger: true, currency: true, redis: true } },
  },
  getMetrics: {
    response:
      '# HELP http_requests_total Requests answered, by route and status\n' +
      '# TYPE http_requests_total counter\n' +
      'http_requests_total{method="POST",route="/account/{id}/deposit",status="202"} 1027\n',
  },
} satisfies { [K in keyof typeof GATEWAY_OPERATIONS]?: OperationExamples };
