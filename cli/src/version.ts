import { readFileSync } from 'node:fs';

/**
 * The CLI's version, read from its package.json: one level above this module, whether it runs from src/ (a checkout),
 * dist/ (a build) or dist/payments.js (the packed, bundled CLI).
 */
export const CLI_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
