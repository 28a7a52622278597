import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

export type HeaderList = readonly (readonly [name: string, value: string])[];

/**
 * The headers `helmet()` (defaults) sets, in its order, found once by running it against a recording response:
 * the proxied routes set these without walking helmet's dozen middlewares per request, and stay whatever the
 * installed helmet says. Its only other act, removing X-Powered-By, is moot there (nothing sets it).
 */
export function helmetDefaults(): HeaderList {
  const headers = new Map<string, [string, string]>();
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.set(name.toLowerCase(), [name, String(value)]);
      return recorder;
    },
    removeHeader(name: string) {
      headers.delete(name.toLowerCase());
    },
    getHeader(name: string) {
      return headers.get(name.toLowerCase())?.[1];
    },
  };
  let finished = false;
  helmet()({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously');
  return [...headers.values()];
}
