import { randomUUID } from 'node:crypto';
import { bearerCall, type HttpAnswer, type HttpClient } from './http-client.js';
import { sleep } from './load.js';

export interface PostUntilAnswered {
  path: string;
  body: object;
  token: string;
  /** No retry starts after this (epoch milliseconds). */
  giveUpAt: number;
  onRetry?: () => void;
}

/**
 * A POST sent raw with one fixed Idempotency-Key, retried (100 ms, doubling up to 1 s) through outages while it
 * gets no answer or a 5xx: the first answer below 500, or null when none came before `giveUpAt`.
 */
export async function postUntilAnswered(
  gateway: HttpClient,
  { path, body, token, giveUpAt, onRetry }: PostUntilAnswered,
): Promise<HttpAnswer | null> {
  const key = randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    const answer = await gateway
      .send(bearerCall('POST', path, token, body, { 'idempotency-key': key }))
      .catch(() => null);
    if (answer && answer.status < 500) return answer;
    if (Date.now() > giveUpAt) return null;
    onRetry?.();
    await sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
}
