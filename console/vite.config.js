import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));

/**
 * One multi-page build, its files served by the gateway under /console/: the console at index.html, the payment
 * page (served at /pay/{id}) at pay.html. Nothing inline in the output, so the pages hold under a CSP without
 * 'unsafe-inline'.
 */
export default defineConfig({
  root: here('.'),
  base: '/console/',
  // The workspace packages' TypeScript sources, as everywhere in development: no `pnpm build` needed first.
  resolve: { conditions: ['development', 'browser', 'module', 'import', 'default'] },
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill is an inline script; every browser the console supports preloads modules itself.
    modulePreload: { polyfill: false },
    // Never inline an asset as a data: URL into a script or style.
    assetsInlineLimit: 0,
    rollupOptions: {
      input: { index: here('index.html'), pay: here('pay.html') },
    },
  },
});
