import { fileURLToPath } from 'node:url';

/** The built console (index.html, assets/): what the gateway serves at /console. Made by `node build.js`. */
export const consoleDist = fileURLToPath(new URL('./dist/', import.meta.url));
