import {
  DEAD_LETTER_QUEUES,
  OPERATIONS,
  type Access,
  type HttpMethod,
  type Operation,
  type ServiceName,
} from '@payments/contracts/operations';

export type UpstreamName = ServiceName;

export interface RouteEntry {
  /** An exact path, or a prefix ending in `/*` that matches anything below it. */
  pattern: string;
  upstream: UpstreamName;
  /** Where payment providers post their webhooks, authenticated by signatures rather than tokens. */
  providerWebhooks?: true;
}

/** A declared operation as the gateway forwards it: a queue's dead letters once per queue, to its consumer. */
interface Forwarded {
  method: HttpMethod;
  path: string;
  upstream: UpstreamName;
  access: Access;
}

/** A route and the operations answered under it. */
interface Route {
  entry: RouteEntry;
  operations: Forwarded[];
}

const DECLARED: readonly Operation[] = Object.values(OPERATIONS);

const FORWARDED: readonly Forwarded[] = DECLARED.flatMap((operation): Forwarded[] => {
  const { method, path, owner, access } = operation;
  if (owner === 'gateway') return [];
  if (owner === 'consumer of {queue}') {
    return DEAD_LETTER_QUEUES.map((queue) => ({
      method,
      path: path.replace('{queue}', queue),
      upstream: queue,
      access,
    }));
  }
  return [{ method, path, upstream: owner, access }];
});

const segmentsOf = (path: string) => path.split('/').slice(1);
const isParameter = (segment: string) => segment.startsWith('{');

/** The segments of a path template before its first parameter. */
function literalSegments(path: string): string[] {
  const segments = segmentsOf(path);
  const parameter = segments.findIndex(isParameter);
  return parameter === -1 ? segments : segments.slice(0, parameter);
}

/** Whether a path template can name a path below `prefix` (a parameter stands for any segment). */
function mayLieUnder(path: string, prefix: string[]): boolean {
  const segments = segmentsOf(path);
  return prefix.every((segment, i) => {
    const own = segments[i];
    return own !== undefined && (own === segment || isParameter(own));
  });
}

/** The shortest start of an operation's path that no other service's operation shares. */
function ownedPrefix(operation: Forwarded): string[] {
  const literal = literalSegments(operation.path);
  for (let length = 1; length <= literal.length; length++) {
    const prefix = literal.slice(0, length);
    const shared = FORWARDED.some(
      (other) => other.upstream !== operation.upstream && mayLieUnder(other.path, prefix),
    );
    if (!shared) return prefix;
  }
  throw new Error(`${operation.path} is told apart from another service's paths only by a parameter`);
}

function commonStart(paths: string[][]): string[] {
  const [first = []] = paths;
  const length = first.findIndex((segment, i) => paths.some((path) => path[i] !== segment));
  return length === -1 ? first : first.slice(0, length);
}

/**
 * Each service gets, for each start of a path that only its operations have, the longest start its operations there
 * share: exactly, when an operation is at it, and with everything below it, when operations go deeper.
 */
function routesOf(forwarded: readonly Forwarded[]): Route[] {
  const groups = new Map<string, Forwarded[]>();
  for (const operation of forwarded) {
    const key = ownedPrefix(operation).join('/');
    groups.set(key, [...(groups.get(key) ?? []), operation]);
  }
  return [...groups.values()].flatMap((group) => {
    const path = `/${commonStart(group.map((operation) => literalSegments(operation.path))).join('/')}`;
    const upstream = (group[0] as Forwarded).upstream;
    const webhooks = group.filter((operation) => operation.access === 'provider').length;
    // A provider's webhooks are limited and answered by path, so they share none with other callers.
    if (webhooks > 0 && webhooks < group.length)
      throw new Error(`${path} mixes provider webhooks with other calls`);
    const route = (pattern: string, operations: Forwarded[]): Route[] =>
      operations.length === 0
        ? []
        : [
            {
              entry: { pattern, upstream, ...(webhooks > 0 && { providerWebhooks: true as const }) },
              operations,
            },
          ];
    return [
      ...route(
        path,
        group.filter((operation) => operation.path === path),
      ),
      ...route(
        `${path}/*`,
        group.filter((operation) => operation.path !== path),
      ),
    ];
  });
}

const FORWARDED_ROUTES = routesOf(FORWARDED);

/**
 * Every path the gateway forwards and the service behind it, derived from the declared operations. Anything else,
 * `/internal/*` included, is a 404.
 */
export const ROUTES: readonly RouteEntry[] = FORWARDED_ROUTES.map(({ entry }) => entry);

const isPublic = ({ access }: { access: Access }) => access === 'public' || access === 'user-at-service';
const requestMethods = (method: HttpMethod) => (method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()]);

/**
 * Where a method needs no bearer token on a route: all of it, when each of its operations with that method is
 * public; else the public ones alone (a refresh carries the token its service checks).
 */
function publicPartsOf({ entry, operations }: Route): PublicRoute[] {
  if (entry.providerWebhooks) return [{ methods: 'any', pattern: entry.pattern }];
  return [...new Set(operations.map(({ method }) => method))].flatMap((method): PublicRoute[] => {
    const withMethod = operations.filter((operation) => operation.method === method);
    const open = withMethod.filter(isPublic);
    if (open.length === withMethod.length)
      return [{ methods: requestMethods(method), pattern: entry.pattern }];
    return open.map(({ path }) => ({ methods: requestMethods(method), pattern: path }));
  });
}

export interface PublicRoute {
  methods: readonly string[] | 'any';
  /** As a route's pattern, or a path template. */
  pattern: string;
}

/** Paths that need no bearer token. Every other routed path is checked at the edge and again by its service. */
export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  ...FORWARDED_ROUTES.flatMap(publicPartsOf),
  ...DECLARED.filter((operation) => operation.owner === 'gateway' && isPublic(operation)).map(
    ({ method, path }) => ({ methods: requestMethods(method), pattern: path }),
  ),
];

const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** Path templates with their parameters as patterns, most specific (fewest parameters) first. */
const TEMPLATES = [...new Set(DECLARED.map((operation) => operation.path))]
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: templatePattern(template),
  }))
  .sort((a, b) => a.params - b.params);

// Dot segments (plain or percent-encoded) could walk out of a routed prefix on a lenient upstream.
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

export function matchesPattern(pattern: string, path: string): boolean {
  if (pattern.includes('{')) return templatePattern(pattern).test(path);
  if (!pattern.endsWith('/*')) return path === pattern;
  const base = pattern.slice(0, -1);
  return path.length > base.length && path.startsWith(base);
}

export function matchRoute(path: string): RouteEntry | undefined {
  if (DOT_SEGMENT.test(path)) return undefined;
  return ROUTES.find((route) => matchesPattern(route.pattern, path));
}

/** A path under a provider's webhook prefix: errors there are `{ error }` bodies, as providers expect. */
export function isProviderWebhookPath(path: string): boolean {
  return ROUTES.some((route) => route.providerWebhooks && matchesPattern(route.pattern, path));
}

export function isPublicRoute(method: string, path: string): boolean {
  return PUBLIC_ROUTES.some(
    (route) =>
      (route.methods === 'any' || route.methods.includes(method)) && matchesPattern(route.pattern, path),
  );
}

/** A path the gateway forwards as a provider's webhook: limited under a budget of its own, apart from clients'. */
export function isProviderWebhook(path: string): boolean {
  return matchRoute(path)?.providerWebhooks === true;
}

/** The documented template a concrete path falls under (`/account/{id}/deposit`), for logs and metrics. */
export function pathTemplateOf(path: string): string | undefined {
  return TEMPLATES.find(({ pattern }) => pattern.test(path))?.template;
}
