import { PaymentsError } from './errors.js';
import type { TokenSource } from './http-transport.js';
import { decodeBase64Url } from './runtime.js';
import type { LoginRequest, Token } from './types.js';

/** Your own source of tokens, used instead of the client's session (`credentials` / `token`). */
export type TokenProvider = TokenSource;

export interface TokenSessionSettings {
  /** Logs in with these whenever there is no usable token, and again when a refresh is refused. */
  credentials?: LoginRequest | undefined;
  /** A token obtained elsewhere; refreshed before its `exp` like any other. */
  token?: string | undefined;
  /** Refresh this long before the token expires (at most half its lifetime). */
  refreshMarginSeconds: number;
  now: () => number;
  login(credentials: LoginRequest): Promise<Token>;
  refresh(token: string): Promise<Token>;
}

export interface TokenSession extends TokenSource {
  /** Uses a token just obtained (a login or refresh made through the client). */
  adopt(token: Token, receivedAt: number): void;
  /** The token in use, if any. */
  current(): string | null;
  /** Whether it holds a token or has the credentials to get one. */
  canProvide(): boolean;
  /** Forgets the token (after a logout). */
  clear(): void;
}

/**
 * The client's session: logs in on first need, refreshes the token `refreshMarginSeconds` before it expires
 * (once per token, however many calls wait for it), and logs in again when a refresh is refused or a call finds
 * the token expired or revoked. Without credentials it can only refresh the token it was given.
 */
export function createTokenSession(settings: TokenSessionSettings): TokenSession {
  const marginMs = settings.refreshMarginSeconds * 1000;
  /** Refreshes at the margin before expiry, or half-way through a lifetime shorter than two margins. */
  const hold = (token: string, issuedAt: number, expiresAt: number) => ({
    token,
    expiresAt,
    refreshAt: expiresAt - Math.min(marginMs, (expiresAt - issuedAt) / 2),
  });
  let held: { token: string; expiresAt: number; refreshAt: number } | null = settings.token
    ? hold(settings.token, ...lifetimeOf(settings.token))
    : null;
  let pending: Promise<string> | null = null;

  const adopt = (token: Token, receivedAt: number) => {
    held = hold(token.token, receivedAt, receivedAt + token.expires_in * 1000);
  };

  const logIn = async (): Promise<string> => {
    if (!settings.credentials) {
      throw new PaymentsError(
        'No usable token: pass `credentials` to the client, or log in with client.auth.login() first',
      );
    }
    const sentAt = settings.now();
    adopt(await settings.login(settings.credentials), sentAt);
    return (held as { token: string }).token;
  };

  const renew = async (): Promise<string> => {
    const current = held;
    if (current && settings.now() < current.expiresAt) {
      try {
        const sentAt = settings.now();
        adopt(await settings.refresh(current.token), sentAt);
        return (held as { token: string }).token;
      } catch (error) {
        // Refused (already refreshed elsewhere, revoked, past the session's 12 h): a login starts a new session.
        if (!settings.credentials) throw error;
      }
    }
    return logIn();
  };

  return {
    async getToken() {
      if (held && settings.now() < held.refreshAt) return held.token;
      pending ??= renew().finally(() => {
        pending = null;
      });
      return pending;
    },
    tokenRejected(token) {
      if (held?.token === token) held = null;
      return held !== null || settings.credentials !== undefined;
    },
    adopt,
    current: () => held?.token ?? null,
    canProvide: () => held !== null || settings.credentials !== undefined,
    clear() {
      held = null;
    },
  };
}

/** A JWT's `iat` and `exp` in ms, read without verifying (only to know when to refresh); unknown: never expires. */
function lifetimeOf(token: string): [issuedAt: number, expiresAt: number] {
  try {
    const payload = JSON.parse(decodeBase64Url(token.split('.')[1] ?? '')) as {
      iat?: unknown;
      exp?: unknown;
    };
    if (typeof payload.exp !== 'number') return [0, Number.POSITIVE_INFINITY];
    return [typeof payload.iat === 'number' ? payload.iat * 1000 : 0, payload.exp * 1000];
  } catch {
    return [0, Number.POSITIVE_INFINITY];
  }
}
