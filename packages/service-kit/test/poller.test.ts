import { expect } from 'chai';
import { startPoller, type Poller } from '../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A poller whose task records when each run started (ms after the poller was made), finds work when `work` says
 * so, and takes `runMs`.
 */
function recordedPoller(options: {
  intervalMs: number;
  idleMaxMs: number;
  work?: () => boolean;
  runMs?: number;
  fail?: () => boolean;
}) {
  const starts: number[] = [];
  const errors: unknown[] = [];
  let active = 0;
  let overlapped = false;
  const startedAt = Date.now();
  const poller: Poller = startPoller({
    intervalMs: options.intervalMs,
    idleMaxMs: options.idleMaxMs,
    task: async () => {
      starts.push(Date.now() - startedAt);
      active += 1;
      if (active > 1) overlapped = true;
      try {
        if (options.runMs) await sleep(options.runMs);
        if (options.fail?.()) throw new Error('boom');
        return options.work?.() ?? false;
      } finally {
        active -= 1;
      }
    },
    onError: (error) => errors.push(error),
  });
  return { poller, starts, errors, startedAt, overlapped: () => overlapped };
}

describe('poller', function () {
  this.timeout(10_000);

  it('runs less and less often while it finds nothing, up to the idle maximum', async () => {
    const { poller, starts } = recordedPoller({ intervalMs: 20, idleMaxMs: 80 });
    await sleep(1_000);
    await poller.stop();
    // Doubling up to 80 ms: 20, 60, 140, 220, … 940, 13 runs. A fixed 20 ms pace would make ~50; doubling without
    // the maximum 5 (20, 60, 140, 300, 620). The bounds leave room for a machine busy with other tests.
    expect(starts.length).to.be.within(8, 20);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    expect(gaps[0]).to.be.below(70);
    expect(Math.max(...gaps)).to.be.at.least(75);
  });

  it('keeps the fast pace while runs find work, and while they fail', async () => {
    const busy = recordedPoller({ intervalMs: 20, idleMaxMs: 1_000, work: () => true });
    const failing = recordedPoller({ intervalMs: 20, idleMaxMs: 1_000, fail: () => true });
    await sleep(500);
    await Promise.all([busy.poller.stop(), failing.poller.stop()]);
    expect(busy.starts.length).to.be.at.least(8);
    expect(failing.starts.length).to.be.at.least(8);
    expect(failing.errors.length).to.equal(failing.starts.length);
  });

  it('runs at once when woken while backed off, and is back to the fast pace after', async () => {
    const { poller, starts, startedAt } = recordedPoller({ intervalMs: 20, idleMaxMs: 5_000 });
    await sleep(700); // backed off: runs at 20, 60, 140, 300, 620; the next not before 1,260
    const before = starts.length;
    const woken = Date.now() - startedAt;
    poller.wake();
    await sleep(100);
    await poller.stop();
    // At once; it found nothing, so the next 40 ms later (twice the interval), not at the backed-off pace.
    expect(starts.length - before).to.be.within(2, 3);
    expect(starts[before]! - woken).to.be.below(50);
    expect(starts[before + 1]! - starts[before]!).to.be.within(40, 300);
  });

  it('runs by each time asked for, however long the idle wait', async () => {
    const { poller, starts, startedAt } = recordedPoller({ intervalMs: 20, idleMaxMs: 60_000 });
    await sleep(700); // backed off: the next run not before 1,260
    const asked = Date.now() - startedAt;
    poller.wakeAt(startedAt + asked + 300);
    poller.wakeAt(startedAt + asked + 150);
    poller.wakeAt(startedAt + asked + 150);
    const base = starts.length;
    await sleep(500);
    await poller.stop();
    const after = starts.slice(base).map((at) => at - asked);
    expect(after).to.have.length(2);
    // Node's timers may fire a millisecond before the time asked for, which the poller counts as reached.
    expect(after[0]).to.be.within(149, 400);
    expect(after[1]).to.be.within(299, 550);
  });

  it('serves a time asked for once, even when its timer fires before the clock reaches that time', async () => {
    const realNow = Date.now.bind(Date);
    const { poller, starts } = recordedPoller({ intervalMs: 10_000, idleMaxMs: 10_000 });
    poller.wakeAt(realNow() + 50);
    // From now on the wall clock is 5 ms behind the timer's, as Date.now() can be a millisecond behind Node's timers.
    Date.now = () => realNow() - 5;
    try {
      await sleep(200);
      await poller.stop();
    } finally {
      Date.now = realNow;
    }
    expect(starts).to.have.length(1);
  });

  it('never runs twice at once; a wake during a run brings one more right after it', async () => {
    const { poller, starts, overlapped } = recordedPoller({ intervalMs: 10, idleMaxMs: 10, runMs: 100 });
    await sleep(50);
    poller.wake();
    poller.wake();
    poller.wake();
    await sleep(400);
    await poller.stop();
    expect(overlapped()).to.equal(false);
    expect(starts.length).to.be.within(3, 5);
  });

  it('waits on stop for the run under way and runs no more after', async () => {
    const { poller, starts } = recordedPoller({ intervalMs: 10, idleMaxMs: 10, runMs: 100 });
    await sleep(30);
    const stopping = Date.now();
    await poller.stop();
    expect(Date.now() - stopping).to.be.at.least(50);
    const count = starts.length;
    poller.wake();
    poller.wakeAt(Date.now() + 10);
    await sleep(100);
    expect(starts.length).to.equal(count);
  });
});
