import { stopContainers } from './infrastructure.js';

/** Mocha root hooks (`require` in .mocharc.json): the containers a run started are removed when it ends. */
export const mochaHooks = {
  async afterAll(this: { timeout(ms: number): unknown }) {
    this.timeout(60_000);
    await stopContainers();
  },
};
