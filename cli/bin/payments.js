#!/usr/bin/env node
// Runs the TypeScript sources directly (the workspace has no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
