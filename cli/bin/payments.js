#!/usr/bin/env node
// In a checkout the CLI runs its TypeScript sources through tsx, and loads the workspace packages' sources too (the
// `development` export condition). Installed from its packed tarball (no src/), it runs dist/payments.js, the bundle
// `pnpm pack` makes, which holds the workspace packages it uses; elsewhere the compiled dist/ of `pnpm build`.
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
} else if (existsSync(new URL('../dist/payments.js', import.meta.url))) {
  await import('../dist/payments.js');
} else {
  await import('../dist/main.js');
}
