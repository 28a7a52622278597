export { runCli } from './program.js';
export { EXIT } from './exit-codes.js';
