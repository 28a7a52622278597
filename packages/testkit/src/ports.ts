import { createServer } from 'node:net';

/** A port the OS says is free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port nothing listens on for the rest of the test: free now, and in this worker's own range below the kernel's
 * ephemeral ports, where no process of another worker (nor any listener on port 0) can take it meanwhile. A port
 * from freePort() can be given to another worker's server a moment later, which then answers in its place.
 */
export const closedPort = (): Promise<number> => freePortBlock(1);

/** Whether `port` can be listened on now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive free ports, below the kernel's ephemeral range (32768 and up on Linux): a block found with
 * freePort() lies inside it, where any outgoing connection may take one of its later ports as its source port
 * before a service binds it (EADDRINUSE).
 */
export async function freePortBlock(count: number): Promise<number> {
  const [low, high] = portRange();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = low + Math.floor(Math.random() * (high - low - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(bindable))).every(Boolean)) return base;
  }
  throw new Error(`no ${count} consecutive free ports between ${low} and ${high}`);
}

/**
 * 20000–32000, or, in a parallel mocha worker (MOCHA_WORKER_ID), a quarter of it of its own: two workers then
 * never pick the same block in the moment between checking it and binding it.
 */
function portRange(): [number, number] {
  const worker = Number(process.env.MOCHA_WORKER_ID ?? Number.NaN);
  if (!Number.isInteger(worker) || worker < 0) return [20_000, 32_000];
  const low = 20_000 + (worker % 4) * 3_000;
  return [low, low + 3_000];
}

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the error when it does not come. */
  what?: string;
}

/**
 * Polls until `until` holds for what `check` returns, and returns that value. Once `timeoutMs` has passed without
 * it, it throws (naming the last value), so that a wait that never comes true fails the test there instead of
 * letting it go on as if it had.
 */
export async function eventually<T>(
  check: () => Promise<T>,
  until: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 50, what = 'the condition' }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (until(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `${what} did not come true within ${timeoutMs} ms; the last value was ${describeValue(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function describeValue(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
