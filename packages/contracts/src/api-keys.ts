/** API keys (docs/adr/0121); their scopes are in enums.ts. */
import type { ApiKeyScope } from './enums.js';

/** Scopes only an admin's key may carry. */
export const ADMIN_API_KEY_SCOPES: readonly ApiKeyScope[] = ['admin_read', 'admin_write'];

/** `live` in production deployments, `test` elsewhere: a key tells which it belongs to by its prefix. */
export type ApiKeyMode = 'live' | 'test';

/** A secret key (all the user's powers) or a restricted one, of a live or a test deployment. */
export const API_KEY_PATTERN = /^(sk|rk)_(live|test)_[A-Za-z0-9]{20,100}$/;

/** Whether a bearer credential is an API key rather than a token (a JWT never starts this way). */
export const isApiKey = (credential: string): boolean => API_KEY_PATTERN.test(credential);

/** The `jti` every token a key is exchanged for carries: revoking the key is revoking this one id (ADR 0121). */
export const apiKeyTokenId = (keyId: string): string => `api_key:${keyId}`;

/** No token an API key is exchanged for lives longer than this: a key's revocation is kept as long. */
export const MAX_API_KEY_TOKEN_TTL_SECONDS = 3600;
