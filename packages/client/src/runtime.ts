/**
 * What the client needs from its runtime, taken from the web platform's globals only (`crypto`, `TextEncoder`,
 * `atob`, `navigator`), never from `node:` modules: so the same bundle runs in Node, Deno, Bun, browsers and edge
 * runtimes (Cloudflare Workers, Vercel Edge).
 */

/** This package's version, sent in the `User-Agent`; a test keeps it equal to package.json's. */
export const CLIENT_VERSION = '0.2.0';

/** The runtime's WebCrypto: `globalThis.crypto` (Node ≥ 20, Deno, Bun, browsers in a secure context, workers). */
export function webCrypto(): typeof globalThis.crypto {
  const crypto = (globalThis as { crypto?: typeof globalThis.crypto }).crypto;
  if (!crypto?.subtle) {
    throw new TypeError(
      'WebCrypto (globalThis.crypto.subtle) is not available: Node 20 or later, a modern browser over HTTPS, or an edge runtime is needed',
    );
  }
  return crypto;
}

export const randomUUID = (): string => webCrypto().randomUUID();

/** A base64url segment (a JWT's payload) as text. */
export function decodeBase64Url(segment: string): string {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
}

interface RuntimeGlobals {
  process?: { versions?: { node?: string; bun?: string } };
  Deno?: { version?: { deno?: string } };
  navigator?: { userAgent?: string };
}

/**
 * The `User-Agent` the client sends: `payments-client/<version>` and the runtime (`node/22.12.0`, `bun/1.2.0`,
 * `deno/2.1.4`), after the caller's own product token if given (`payments-cli/0.2.0 payments-client/…`). Null in a
 * browser: there the browser's own is sent (Chrome drops a script's, and a custom one would cost a CORS preflight).
 */
export function defaultUserAgent(product?: string, globals: RuntimeGlobals = globalThis): string | null {
  const browserAgent = globals.navigator?.userAgent;
  if (typeof browserAgent === 'string' && browserAgent.startsWith('Mozilla/')) return null;
  const versions = globals.process?.versions;
  const runtime = versions?.bun
    ? `bun/${versions.bun}`
    : versions?.node
      ? `node/${versions.node}`
      : globals.Deno?.version?.deno
        ? `deno/${globals.Deno.version.deno}`
        : browserAgent
          ? browserAgent.replace(/[^\x21-\x7e]+/g, '_')
          : null;
  return [product, `payments-client/${CLIENT_VERSION}`, runtime].filter(Boolean).join(' ');
}
