#!/usr/bin/env node
// In a checkout the CLI runs its TypeScript sources through tsx, and loads the workspace packages' sources too (the
// `development` export condition). Installed from a build (`pnpm build`; no src/), it runs the compiled dist/.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';

const sources = new URL('../src/main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  registerHooks(
    'data:text/javascript,export function resolve(specifier, context, next) {' +
      ' return next(specifier, { ...context, conditions: [...context.conditions, "development"] }); }',
  );
  await import(sources.href);
} else {
  await import('../dist/main.js');
}
