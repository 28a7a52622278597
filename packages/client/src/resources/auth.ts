import { PaymentsError } from '../errors.js';
import type { RequestOptions } from '../http-transport.js';
import type { Discovery, LoginRequest, SigningKeys, Token } from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

export function authResource({ transport, session, now }: ResourceDeps) {
  return {
    /** Logs in (password and one of username, email or identity); the client's session then uses the token. */
    async login(credentials: LoginRequest, options?: RequestOptions): Promise<Token> {
      const sentAt = now();
      const { body } = await transport.call<Token>('login', { body: credentials, options });
      session?.adopt(body, sentAt);
      return body;
    },

    /** Exchanges a valid token (by default the session's) for a fresh one, once per token. */
    async refresh(token?: string, options?: RequestOptions): Promise<Token> {
      const current = token ?? session?.current();
      if (!current) throw new PaymentsError('No token to refresh: log in first');
      const sentAt = now();
      const { body } = await transport.call<Token>('refreshToken', { bearer: current, options });
      session?.adopt(body, sentAt);
      return body;
    },

    /** Revokes the token everywhere; the session forgets it. */
    async logout(options?: RequestOptions): Promise<void> {
      await transport.call<void>('logout', { options });
      session?.clear();
    },

    /** The public keys tokens are signed with (JWKS). */
    async signingKeys(options?: RequestOptions): Promise<SigningKeys> {
      return transport.body<SigningKeys>('getSigningKeys', { options });
    },
  };
}

export function discoveryResource({ transport }: ResourceDeps) {
  return {
    /** The versions the API serves. */
    async versions(options?: RequestOptions): Promise<Discovery> {
      return transport.body<Discovery>('discoverVersions', { options });
    },
  };
}
