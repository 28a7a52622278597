import { randomBytes } from 'node:crypto';

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

  return {
    request,
    get: (path: string, token?: string) => request('GET', path, { token }),
    post: (path: string, body: unknown, token?: string, headers?: Record<string, string>) =>
      request('POST', path, { body, token, headers }),

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
