import { randomBytes } from 'node:crypto';
import { createHttpClient, type HttpClient } from './http-client.js';

export interface BenchUser {
  userId: string;
  username: string;
  password: string;
  token: string;
}

export interface PaymentsApi {
  http: HttpClient;
  /** Registers a new user and logs in. */
  signUp(prefix?: string): Promise<BenchUser>;
  login(username: string, password: string): Promise<string>;
  openAccount(token: string, currency?: string): Promise<string>;
  close(): void;
}

/** The public API through the gateway, for setting a scenario up the way a user would. */
export function createPaymentsApi(gatewayUrl: string): PaymentsApi {
  const http = createHttpClient(gatewayUrl, 16);
  const login = async (username: string, password: string) => {
    const answer = await http.json<{ token: string }>({
      method: 'POST',
      path: '/auth/login',
      json: { username, password },
    });
    return answer.token;
  };
  return {
    http,
    login,
    async signUp(prefix = 'bench') {
      const username = `${prefix}_${randomBytes(5).toString('hex')}`;
      const password = `pw-${randomBytes(9).toString('hex')}`;
      const user = await http.json<{ id: string }>({
        method: 'POST',
        path: '/user',
        json: { username, email: `${username}@example.com`, password },
      });
      return { userId: user.id, username, password, token: await login(username, password) };
    },
    async openAccount(token, currency = 'USD') {
      const account = await http.json<{ id: string }>({
        method: 'POST',
        path: '/v1.1/account',
        json: { currency },
        token,
      });
      return account.id;
    },
    close: () => http.close(),
  };
}
