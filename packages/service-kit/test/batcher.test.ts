import { expect } from 'chai';
import { createBatcher } from '../src/index.js';

describe('batcher (group commit)', () => {
  it('runs the items submitted in one turn together and gives each its own result', async () => {
    const runs: number[][] = [];
    const batcher = createBatcher(
      async (items: number[]) => {
        runs.push(items);
        return items.map((item) => item * 10);
      },
      { maxSize: 100 },
    );
    const results = await Promise.all([1, 2, 3, 4].map((item) => batcher.submit(item)));
    expect(results).to.deep.equal([10, 20, 30, 40]);
    expect(runs).to.deep.equal([[1, 2, 3, 4]]);
  });

  it('collects what arrives during a run into the next one, never more than maxSize at a time', async () => {
    const runs: number[][] = [];
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const batcher = createBatcher(
      async (items: number[]) => {
        runs.push(items);
        if (runs.length === 1) await blocked;
        return items;
      },
      { maxSize: 3 },
    );
    const first = batcher.submit(0);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [1, 2, 3, 4, 5].map((item) => batcher.submit(item));
    release();
    expect(await Promise.all([first, ...later])).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(runs).to.deep.equal([[0], [1, 2, 3], [4, 5]]);
  });

  it('splits a failed run so that only the failing item is rejected', async () => {
    const runs: string[][] = [];
    const batcher = createBatcher(
      async (items: string[]) => {
        runs.push(items);
        if (items.includes('poison')) throw new Error('poisoned');
        return items.map((item) => item.toUpperCase());
      },
      { maxSize: 10 },
    );
    const outcomes = await Promise.allSettled(['a', 'poison', 'b'].map((item) => batcher.submit(item)));
    expect(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
    ).to.deep.equal(['A', 'poisoned', 'B']);
    expect(runs).to.deep.equal([['a', 'poison', 'b'], ['a'], ['poison'], ['b']]);
  });

  it('rejects every item of a run that returns the wrong number of results', async () => {
    const batcher = createBatcher(async (items: number[]) => items.slice(1), { maxSize: 10 });
    const outcomes = await Promise.allSettled([1, 2].map((item) => batcher.submit(item)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected']);
  });

  describe('gathering under load', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const gather = { below: 3, ms: 60 };

    function recording() {
      const runs: number[][] = [];
      const batcher = createBatcher(
        async (items: number[]) => {
          runs.push(items);
          return items;
        },
        { maxSize: 10, gather },
      );
      return { runs, batcher };
    }

    it('lets a small run that starts right behind another wait, and takes what arrived meanwhile', async () => {
      const { runs, batcher } = recording();
      await batcher.submit(0);
      const behind = batcher.submit(1);
      // The batcher's own turn comes first: without the gather it would take [1] alone here.
      await new Promise((resolve) => setImmediate(resolve));
      const meanwhile = [2, 3].map((item) => batcher.submit(item));
      await Promise.all([behind, ...meanwhile]);
      expect(runs).to.deep.equal([[0], [1, 2, 3]]);
    });

    it('runs an item that comes after a quiet spell at once', async () => {
      const { runs, batcher } = recording();
      await batcher.submit(0);
      await sleep(gather.ms * 2);
      const alone = batcher.submit(1);
      await sleep(gather.ms / 3);
      expect(runs, 'run before the gathering time passed').to.deep.equal([[0], [1]]);
      await alone;
    });

    it('never holds back a run that is big enough', async () => {
      const { runs, batcher } = recording();
      await batcher.submit(0);
      const enough = [1, 2, 3].map((item) => batcher.submit(item));
      await sleep(gather.ms / 3);
      expect(runs, 'run before the gathering time passed').to.deep.equal([[0], [1, 2, 3]]);
      await Promise.all(enough);
    });
  });
});
