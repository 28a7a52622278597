import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type { ApiKey, ApiKeyWithSecret, NewApiKeyRequest, Page, PageQuery } from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

/** Your API keys for servers: secret or restricted to scopes (see the README's "API keys"). */
export function apiKeysResource({ transport }: ResourceDeps) {
  const listPage = async (query: PageQuery = {}, options?: RequestOptions) =>
    transport.body<Page<ApiKey>>('listApiKeys', { query, options });
  return {
    /** Creates a key; the answer's `secret` is shown this once (only its hash is kept). */
    async create(key: NewApiKeyRequest, options?: RequestOptions): Promise<ApiKeyWithSecret> {
      return transport.body<ApiKeyWithSecret>('createApiKey', { body: key, options });
    },
    /** Your keys not revoked, newest first, every page; never their secrets. */
    list: (query: PageQuery = {}, options?: RequestOptions): PagedList<ApiKey> =>
      pagedList((window) => listPage({ ...query, ...window }, options), query),
    listPage,
    /** Revokes a key everywhere, at once. */
    async revoke(keyId: string, options?: RequestOptions): Promise<void> {
      await transport.call<void>('revokeApiKey', { params: { id: keyId }, options });
    },
  };
}
