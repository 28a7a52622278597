import type { Operation } from './operation.js';

/** What the gateway answers itself: discovery, this document, its probes and metrics. */
export const GATEWAY_OPERATIONS = {
  discoverVersions: {
    method: 'get',
    path: '/',
    owner: 'gateway',
    access: 'public',
    tag: 'Discovery',
    summary: 'List the API versions',
    success: { status: 200, description: 'The versions served', schema: 'Discovery' },
    errors: [],
  },
  getOpenApiDocument: {
    method: 'get',
    path: '/openapi.json',
    owner: 'gateway',
    access: 'public',
    tag: 'Discovery',
    summary: 'This document',
    success: { status: 200, description: 'The OpenAPI 3.1 document', mediaType: 'application/json' },
    errors: [],
  },
  getApiDocumentation: {
    method: 'get',
    path: '/docs',
    owner: 'gateway',
    access: 'public',
    tag: 'Discovery',
    summary: 'This document, rendered',
    success: { status: 200, description: 'An HTML page', mediaType: 'text/html' },
    errors: [],
  },
  checkHealth: {
    method: 'get',
    path: '/health',
    owner: 'gateway',
    access: 'public',
    tag: 'Operations',
    summary: 'Liveness',
    success: { status: 200, description: 'The gateway is up', schema: 'Health' },
    errors: [],
  },
  checkReadiness: {
    method: 'get',
    path: '/ready',
    owner: 'gateway',
    access: 'service',
    tag: 'Operations',
    summary: 'Readiness: this gateway can serve',
    description:
      'Answers 503 with the same body until its revocations are loaded, and while it drains after SIGTERM. ' +
      'It asks no other service: one that is down answers 503 on its own routes only.',
    success: { status: 200, description: 'The gateway is ready', schema: 'Readiness' },
    alsoAnswers: [503],
    errors: [401],
  },
  getMetrics: {
    method: 'get',
    path: '/metrics',
    owner: 'gateway',
    access: 'service',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    success: { status: 200, description: 'The Prometheus text format', mediaType: 'text/plain' },
    errors: [401],
  },
} satisfies Record<string, Operation>;
