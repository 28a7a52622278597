import type { ApiKeyScope } from '@payments/contracts';
import { OPERATIONS, type Operation } from '@payments/contracts/operations';

const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** Every declared operation with its path as a pattern, most specific (fewest parameters) first. */
const MATCHERS = Object.values(OPERATIONS as Record<string, Operation>)
  .map((operation) => ({
    operation,
    params: (operation.path.match(/\{/g) ?? []).length,
    pattern: templatePattern(operation.path),
  }))
  .sort((a, b) => a.params - b.params);

/** Tags whose changes move money or open what holds it. */
const MONEY_TAGS = new Set<string>(['Accounts', 'Money operations', 'Transactions']);

/** The scope an operation needs from a restricted key; undefined: no restricted key may call it. */
export function scopeOf(operation: Pick<Operation, 'method' | 'tag'>): ApiKeyScope | undefined {
  const reads = operation.method === 'get';
  if (operation.tag === 'Administration') return reads ? 'admin_read' : 'admin_write';
  // Keys and the user are managed with a session or a secret key alone, reads of keys included.
  if (operation.tag === 'API keys') return undefined;
  if (reads) return 'read';
  if (MONEY_TAGS.has(operation.tag)) return 'money';
  if (operation.tag === 'Webhook endpoints') return 'webhook_endpoints';
  return undefined;
}

/**
 * The scope a request needs from a restricted key (docs/adr/0121), by the declared operation it calls; undefined
 * when no restricted key may make it, an undeclared request included: what is not granted is refused.
 */
export function requiredScope(method: string, path: string): ApiKeyScope | undefined {
  const verb = method === 'HEAD' ? 'get' : method.toLowerCase();
  const match = MATCHERS.find(({ operation, pattern }) => operation.method === verb && pattern.test(path));
  return match && scopeOf(match.operation);
}
