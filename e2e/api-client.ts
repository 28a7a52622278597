import { randomBytes } from 'node:crypto';
import { eventually } from '@payments/testkit';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- responses are asserted field by field
  text: string;
}

/** A thin JSON client for driving the system through its public address, as a user's program would. */
export function apiClient(baseUrl: string) {
  const request = async (
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(baseUrl + path, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  const confirmPayment = async (transactionId: string, token: string): Promise<ApiResponse> => {
    const webhook = await request('POST', '/webhook/payment', {
      body: { payment_id: transactionId, status: 'completed' },
    });
    if (webhook.status !== 200) throw new Error(`webhook answered ${webhook.status}: ${webhook.text}`);
    const transaction = await eventually(
      () => request('GET', `/transaction/${transactionId}`, { token }),
      (response) => response.body?.status !== 'pending',
    );
    if (transaction.body?.status !== 'completed') {
      throw new Error(`transaction ${transactionId} did not complete: ${transaction.text}`);
    }
    return transaction;
  };

  return {
    request,
    get: (path: string, token?: string) => request('GET', path, { token }),
    post: (path: string, body: unknown, token?: string, headers?: Record<string, string>) =>
      request('POST', path, { body, token, headers }),
    put: (path: string, body: unknown, token?: string, headers?: Record<string, string>) =>
      request('PUT', path, { body, token, headers }),
    delete: (path: string, token?: string) => request('DELETE', path, { token }),

    /** Deposits into an account and confirms the payment as the provider would; resolves once it is completed. */
    async depositConfirmed(token: string, accountId: string, amount: number | string, currency: string) {
      const accepted = await request('POST', `/account/${accountId}/deposit`, {
        body: { amount, currency },
        token,
      });
      if (accepted.status !== 202) throw new Error(`deposit answered ${accepted.status}: ${accepted.text}`);
      return confirmPayment(accepted.body.id as string, token);
    },

    /** Confirms a pending deposit or withdrawal through the webhook; resolves with the completed transaction. */
    confirmPayment: (transactionId: string, token: string) => confirmPayment(transactionId, token),

    /** Registers and logs in a new user; returns the token and the user's id. */
    async signUp(): Promise<{ token: string; userId: string; username: string; password: string }> {
      const username = `user_${randomBytes(5).toString('hex')}`;
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const registered = await request('POST', '/user', {
        body: { username, email: `${username}@example.com`, password },
      });
      if (registered.status !== 201)
        throw new Error(`register answered ${registered.status}: ${registered.text}`);
      const login = await request('POST', '/auth/login', { body: { username, password } });
      if (login.status !== 200) throw new Error(`login answered ${login.status}: ${login.text}`);
      return { token: login.body.token, userId: registered.body.id, username, password };
    },
  };
}

export type ApiClient = ReturnType<typeof apiClient>;
