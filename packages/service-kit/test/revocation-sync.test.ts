import { expect } from 'chai';
import { createLogger, startRevocationSync } from '../src/index.js';
import { eventually } from '@payments/testkit';

const logger = createLogger('sync-test', 'silent');

describe('revocation sync', () => {
  it('retries a failing load until it succeeds, and is loaded only then', async () => {
    let calls = 0;
    const sync = startRevocationSync({
      logger,
      retryMinMs: 10,
      load: async () => {
        calls += 1;
        if (calls < 4) throw new Error('identity is not up');
      },
    });
    try {
      await sync.firstAttempt;
      expect(sync.isLoaded()).to.equal(false);
      expect(await eventually(async () => sync.isLoaded(), Boolean)).to.equal(true);
      expect(calls).to.equal(4);
    } finally {
      sync.stop();
    }
  });

  it('loads once more when a reload is asked for while a load is running', async () => {
    const started: number[] = [];
    let release: () => void = () => undefined;
    const sync = startRevocationSync({
      logger,
      load: () => {
        started.push(Date.now());
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    try {
      expect(started).to.have.length(1);
      // A subscription made while the first load is in flight: that load may have missed what came before it.
      sync.reload();
      sync.reload();
      release();
      await eventually(
        async () => started.length,
        (n) => n === 2,
      );
      release();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(started).to.have.length(2);
      expect(sync.isLoaded()).to.equal(true);
    } finally {
      sync.stop();
    }
  });
});
