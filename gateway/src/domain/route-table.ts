import { QUEUES, type QueueKey } from '@payments/contracts';

const UPSTREAM_NAMES = ['identity', 'ledger', 'currency', 'webhook-ingest', 'webhook-delivery'] as const;

export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

/**
 * The queues whose dead letters an admin reaches through the gateway: each is named by the service that consumes
 * it, and that service serves them (the provider sandbox, no upstream of the gateway, is left out).
 */
export const DEAD_LETTER_QUEUES = (Object.keys(QUEUES) as QueueKey[]).filter(
  (queue): queue is QueueKey & UpstreamName => (UPSTREAM_NAMES as readonly string[]).includes(queue),
);

/** Where payment providers post their webhooks, authenticated by signatures rather than tokens. */
const PROVIDER_WEBHOOKS = '/webhook/*';

export interface RouteEntry {
  /** An exact path, or a prefix ending in `/*` that matches anything below it. */
  pattern: string;
  upstream: UpstreamName;
}

/** Every path the gateway forwards and the service behind it. Anything else, `/internal/*` included, is a 404. */
export const ROUTES: readonly RouteEntry[] = [
  { pattern: '/auth/*', upstream: 'identity' },
  { pattern: '/login', upstream: 'identity' },
  { pattern: '/user', upstream: 'identity' },
  { pattern: '/user/*', upstream: 'identity' },
  // The ledger's views for operators, then each queue's dead letters at its consumer; every other /admin path
  // is identity's.
  { pattern: '/admin/reconciliation', upstream: 'ledger' },
  { pattern: '/admin/reconciliation/*', upstream: 'ledger' },
  { pattern: '/admin/actions', upstream: 'ledger' },
  { pattern: '/admin/overdrawn-accounts', upstream: 'ledger' },
  ...DEAD_LETTER_QUEUES.flatMap((queue): RouteEntry[] => [
    { pattern: `/admin/dead-letters/${queue}`, upstream: queue },
    { pattern: `/admin/dead-letters/${queue}/*`, upstream: queue },
  ]),
  { pattern: '/admin/*', upstream: 'identity' },
  { pattern: '/.well-known/jwks.json', upstream: 'identity' },
  { pattern: '/account', upstream: 'ledger' },
  { pattern: '/account/*', upstream: 'ledger' },
  { pattern: '/accounts', upstream: 'ledger' },
  { pattern: '/payout-account', upstream: 'ledger' },
  { pattern: '/transactions', upstream: 'ledger' },
  { pattern: '/transaction/*', upstream: 'ledger' },
  { pattern: '/api/currencies', upstream: 'currency' },
  { pattern: '/api/currencies/*', upstream: 'currency' },
  { pattern: PROVIDER_WEBHOOKS, upstream: 'webhook-ingest' },
  { pattern: '/webhook-endpoints', upstream: 'webhook-delivery' },
  { pattern: '/webhook-endpoints/*', upstream: 'webhook-delivery' },
];

const READ = ['GET', 'HEAD'] as const;

/** Paths that need no bearer token. Every other routed path is checked at the edge and again by its service. */
export const PUBLIC_ROUTES: readonly { methods: readonly string[] | 'any'; pattern: string }[] = [
  { methods: ['POST'], pattern: '/user' },
  { methods: ['POST'], pattern: '/auth/login' },
  { methods: ['POST'], pattern: '/login' },
  // The refresh call carries the token being refreshed; identity checks it.
  { methods: ['POST'], pattern: '/auth/refresh' },
  { methods: READ, pattern: '/.well-known/jwks.json' },
  { methods: READ, pattern: '/api/currencies' },
  { methods: READ, pattern: '/api/currencies/*' },
  { methods: 'any', pattern: PROVIDER_WEBHOOKS },
  { methods: READ, pattern: '/' },
  { methods: READ, pattern: '/health' },
  { methods: READ, pattern: '/openapi.json' },
  { methods: READ, pattern: '/docs' },
  { methods: READ, pattern: '/docs/*' },
];

// Dot segments (plain or percent-encoded) could walk out of a routed prefix on a lenient upstream.
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

export function matchesPattern(pattern: string, path: string): boolean {
  if (!pattern.endsWith('/*')) return path === pattern;
  const base = pattern.slice(0, -1);
  return path.length > base.length && path.startsWith(base);
}

export function matchRoute(path: string): RouteEntry | undefined {
  if (DOT_SEGMENT.test(path)) return undefined;
  return ROUTES.find((route) => matchesPattern(route.pattern, path));
}

export function isPublicRoute(method: string, path: string): boolean {
  return PUBLIC_ROUTES.some(
    (route) =>
      (route.methods === 'any' || route.methods.includes(method)) && matchesPattern(route.pattern, path),
  );
}

/** A path the gateway forwards as a provider's webhook: limited under a budget of its own, apart from clients'. */
export function isProviderWebhook(path: string): boolean {
  return matchRoute(path)?.pattern === PROVIDER_WEBHOOKS;
}
