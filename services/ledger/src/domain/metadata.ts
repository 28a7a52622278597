import { validationError } from '@payments/service-kit';

export const METADATA_MAX_BYTES = 4096;
export const METADATA_MAX_DEPTH = 5;

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((deepest, child) => Math.max(deepest, depthOf(child)), 0);
}

/** Account metadata: a JSON object of bounded size and nesting; anything else is a 400. */
export function readMetadata(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  const fail = (message: string) => validationError([{ field: 'metadata', message }]);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw fail('must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(value)) > METADATA_MAX_BYTES) {
    throw fail(`must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
  if (depthOf(value) > METADATA_MAX_DEPTH) throw fail(`must nest at most ${METADATA_MAX_DEPTH} levels deep`);
  return value as Record<string, unknown>;
}
