import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { apiCompare, isRequestBodySchema, isResponseSchema, type Diff } from 'api-smart-diff';
import { API_VERSIONS, WEBHOOK_EVENT_TYPES } from '@payments/contracts';
import { buildOpenApiDocument } from '../gateway/src/openapi/openapi-document.js';

// The committed contract: docs/openapi.json is the document the gateway builds, written by `pnpm openapi:write`,
// and a change to it that would break a client needs a new major API version (docs/adr/0124-…).

type Json = Record<string, unknown>;

export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
export const WRITE_COMMAND = 'pnpm openapi:write';

/** The document the gateway serves, as the committed file holds it: JSON as prettier leaves it. */
export async function generatedDocument(): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(OPENAPI_FILE)) ?? {};
  return prettier.format(JSON.stringify(buildOpenApiDocument()), { ...options, filepath: OPENAPI_FILE });
}

export async function committedDocument(): Promise<string | undefined> {
  return existsSync(OPENAPI_FILE) ? readFile(OPENAPI_FILE, 'utf8') : undefined;
}

/** One change of the document that would break a client written against the one before. */
export interface BreakingChange {
  /** api-smart-diff's words for it, e.g. "[Removed] property `currency` in Response 200 content". */
  description: string;
  /** Where, as a JSON pointer into the document (for webhooks, into `webhooks`). */
  at: string;
}

/**
 * Values that may be added to an enum a client reads without breaking it: a new API version (clients name the
 * version they want) and a new event type (Stripe's rule: a webhook listener handles unfamiliar event types).
 */
export const OPEN_ENUM_VALUES: readonly string[] = [...API_VERSIONS, ...WEBHOOK_EVENT_TYPES];

/** Keywords whose replaced value neither widens nor narrows: a changed type or constant breaks readers too. */
const UNORDERED_KEYWORDS = new Set(['type', 'const', 'format', 'pattern']);

const WEBHOOK_PREFIX = '/webhooks/';

/**
 * The document with each outgoing webhook as an operation whose response is the event: what an endpoint receives
 * it reads as a client reads a response, so removing a field of it breaks, and adding one does not.
 */
function asComparable(document: Json): Json {
  const copy = structuredClone(document) as Json & { paths?: Json; webhooks?: Json };
  const webhooks = (copy.webhooks ?? {}) as Record<string, Record<string, Json>>;
  for (const [name, item] of Object.entries(webhooks)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = operation.requestBody as { content?: Json } | undefined;
      copy.paths = {
        ...copy.paths,
        [`${WEBHOOK_PREFIX}${name}`]: {
          [method]: {
            operationId: operation.operationId,
            responses: { '200': { description: 'The event', content: body?.content ?? {} } },
          },
        },
      };
    }
  }
  delete copy.webhooks;
  withoutProse(copy);
  return copy;
}

/**
 * Drops what no client's code reads, which also makes the comparison quicker: descriptions and summaries (a
 * string there; a property named `description` is a schema), and the examples beside a media type's schema.
 */
function withoutProse(node: unknown): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) return node.forEach(withoutProse);
  const object = node as Json;
  for (const key of ['description', 'summary']) if (typeof object[key] === 'string') delete object[key];
  if ('schema' in object) {
    delete object.example;
    delete object.examples;
  }
  Object.values(object).forEach(withoutProse);
}

const pointer = (path: readonly (string | number)[]) =>
  `#/${path.map((key) => String(key).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

/** The value an added enum member stands for: `{ const }` in a TypeBox union, or the item of an `enum`. */
function addedEnumValue(diff: Diff): string | undefined {
  if (diff.action !== 'add') return undefined;
  const parent = diff.path.at(-2);
  if (parent !== 'anyOf' && parent !== 'oneOf' && parent !== 'enum') return undefined;
  const value = parent === 'enum' ? diff.after : (diff.after as { const?: unknown } | undefined)?.const;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether a change reaches a client by itself: a component does where an operation uses it, and is compared
 * there; a security scheme does once it exists (a new one, such as API keys, is only a new way in); the tags that
 * group operations never do.
 */
function reachesClients(diff: Diff): boolean {
  // Tags only group operations in the document's reading order: a new group between two others moves no call.
  if (diff.path[0] === 'tags' || (diff.path[0] === 'paths' && diff.path[3] === 'tags')) return false;
  if (diff.path[0] !== 'components') return true;
  return diff.path[1] === 'securitySchemes' && !(diff.action === 'add' && diff.path.length === 3);
}

function isBreaking(diff: Diff, openValues: readonly string[]): boolean {
  const value = addedEnumValue(diff);
  if (value !== undefined && openValues.includes(value)) return false;
  if (diff.type === 'breaking' || diff.type === 'unclassified') return true;
  // api-smart-diff reverses its request rules for responses, which turns a replaced type or constant (breaking
  // in a request) into a harmless change in a response; a client reading either breaks.
  const key = diff.path.at(-1);
  if (diff.action === 'replace' && isResponseSchema(diff.path) && UNORDERED_KEYWORDS.has(String(key)))
    return true;
  // It also lets a field go from a response when it was optional, though a client that shows the fee when there
  // is one loses it all the same (Stripe counts only added response fields as compatible); and from a request
  // body, where a client that still sends it is refused (a closed body) or silently ignored (an open one).
  const field = diff.action === 'remove' && diff.path.at(-2) === 'properties';
  return field && (isResponseSchema(diff.path) || isRequestBodySchema(diff.path));
}

/**
 * The changes from `before` to `after` that would break a client of `before`, classified by api-smart-diff
 * (OpenAPI 3.x rules: a removed operation, response field or accepted value, a request field made required, a
 * narrowed request schema…). Component schemas count where operations use them: every change to one is reported
 * at each request or response it reaches, with that direction's rules.
 */
export function breakingChanges(
  before: Json,
  after: Json,
  openValues: readonly string[] = OPEN_ENUM_VALUES,
): BreakingChange[] {
  const { diffs } = apiCompare(asComparable(before), asComparable(after));
  const seen = new Set<string>();
  // api-smart-diff describes a change to a shared schema once, and each further place it reaches as an
  // "annotation": those borrow the first description's words, with their own place.
  const said = new Map<string, string>();
  const describe = (diff: Diff, path: string[]) => {
    const inSchema = path.lastIndexOf('schema');
    const key = `${diff.action} ${inSchema < 0 ? path.join('/') : path.slice(inSchema).join('/')}`;
    const description = diff.description || `[${diff.action}] ${path.at(-1)}`;
    const [what, where] = splitAt(description, ' in ');
    if (!/\] annotation \(/.test(what)) {
      said.set(key, what);
      return description;
    }
    const first = said.get(key);
    return first === undefined ? description : `${first}${where === undefined ? '' : ` in ${where}`}`;
  };
  return diffs
    .filter(reachesClients)
    .filter((diff) => isBreaking(diff, openValues))
    .map((diff) => {
      const path = diff.path.map(String);
      const webhook = path[0] === 'paths' && path[1]?.startsWith(WEBHOOK_PREFIX);
      const at = webhook
        ? pointer(['webhooks', path[1]!.slice(WEBHOOK_PREFIX.length), ...path.slice(2)])
        : pointer(path);
      return { description: describe(diff, path), at };
    })
    .filter((change) => {
      const key = `${change.description} ${change.at}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
}

function splitAt(text: string, separator: string): [string, string | undefined] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, undefined] : [text.slice(0, index), text.slice(index + separator.length)];
}

const major = (version: unknown) => Number(String(version).split('.')[0]);

/** Breaking changes need a new major version (SPEC.md, Versioning): 1.x → 2.0. */
export function allowsBreakingChanges(before: Json, after: Json): boolean {
  const [from, to] = [(before.info as Json | undefined)?.version, (after.info as Json | undefined)?.version];
  return major(to) > major(from);
}

export function describeBreakingChanges(changes: readonly BreakingChange[], version: unknown): string {
  return (
    `The API document breaks clients of version ${String(version)}:\n` +
    changes.map((change) => `  - ${change.description}\n      at ${change.at}`).join('\n') +
    '\nMake the change additive (a new optional field, a new operation), or put it in a new major version ' +
    '(packages/contracts/src/versions.ts) and keep serving the old one; then run `' +
    WRITE_COMMAND +
    '`.'
  );
}

/**
 * `pnpm openapi:write`: writes docs/openapi.json from the operations, unless the new document breaks clients of the
 * committed one at the same major version.
 */
async function main(): Promise<void> {
  const generated = await generatedDocument();
  const committed = await committedDocument();
  if (committed !== undefined) {
    const [before, after] = [JSON.parse(committed) as Json, JSON.parse(generated) as Json];
    const changes = breakingChanges(before, after);
    if (changes.length > 0 && !allowsBreakingChanges(before, after)) {
      console.error(describeBreakingChanges(changes, (before.info as Json).version));
      process.exitCode = 1;
      return;
    }
  }
  if (committed === generated) {
    console.log('docs/openapi.json is up to date');
    return;
  }
  await writeFile(OPENAPI_FILE, generated);
  console.log('Wrote docs/openapi.json');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
