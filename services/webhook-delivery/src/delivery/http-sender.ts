import http from 'node:http';
import https from 'node:https';
import { literalHostAllowed, type AddressGuard } from './address-guard.js';

/** Only this much of an answer is kept: endpoints' bodies are theirs, not ours to store. */
export const RESPONSE_PREFIX_CHARS = 256;
const RESPONSE_READ_BYTES = 1024;

export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseBodyPrefix: string | null;
}

export interface WebhookSender {
  /** `timeoutMs` may shorten the attempt's budget (a drill's remaining time), never lengthen it. */
  send(
    url: string,
    body: string,
    headers: Record<string, string>,
    limits?: { timeoutMs?: number },
  ): Promise<SendResult>;
}

/**
 * POSTs one delivery: a fresh connection every time (no keep-alive, so every attempt resolves and checks the
 * name again), no redirects followed, the whole attempt bounded by `timeoutMs`.
 */
export function createWebhookSender(options: {
  guard: AddressGuard;
  allowPrivate: boolean;
  timeoutMs: number;
  userAgent?: string;
}): WebhookSender {
  return {
    send(url, body, headers, limits) {
      const timeoutMs = Math.min(options.timeoutMs, limits?.timeoutMs ?? options.timeoutMs);
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      return new Promise<SendResult>((resolve) => {
        let settled = false;
        const finish = (result: Omit<SendResult, 'latencyMs'>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ ...result, latencyMs: elapsed() });
        };
        const fail = (error: string) => finish({ statusCode: null, error, responseBodyPrefix: null });
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          fail('invalid URL');
          return;
        }
        if (!literalHostAllowed(target.hostname, options.allowPrivate)) {
          fail('refused: the endpoint address is not public');
          return;
        }
        const client = target.protocol === 'https:' ? https : http;
        const request = client.request(target, {
          method: 'POST',
          agent: false,
          lookup: options.guard.lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': options.userAgent ?? 'payments-webhooks/1.0',
            ...headers,
          },
        });
        const timer = setTimeout(() => {
          fail(`timed out after ${timeoutMs} ms`);
          request.destroy();
        }, timeoutMs);
        request.on('error', (error: NodeJS.ErrnoException) => {
          fail(
            error.code === 'EUNSAFEADDRESS'
              ? 'refused: the endpoint address is not public'
              : (error.code ?? 'connection failed'),
          );
        });
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          let read = 0;
          const done = () => {
            const text = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_PREFIX_CHARS);
            const status = response.statusCode ?? 0;
            finish({
              statusCode: status,
              error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
              responseBodyPrefix: text || null,
            });
            response.destroy();
          };
          response.on('data', (chunk: Buffer) => {
            if (read >= RESPONSE_READ_BYTES) return;
            chunks.push(chunk.subarray(0, RESPONSE_READ_BYTES - read));
            read += chunk.length;
            if (read >= RESPONSE_READ_BYTES) done();
          });
          response.on('end', done);
          response.on('error', done);
        });
        request.end(body);
      });
    },
  };
}
