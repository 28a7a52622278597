import { randomBytes } from 'node:crypto';
import {
  createPaymentsClient,
  type ApiVersion,
  type ClientOptions,
  type LoginRequest,
  type PaymentsClient,
} from '../../src/index.js';

export interface RecordedCall {
  method: string;
  path: string;
  status: number | null;
  /** The request's headers. */
  headers: Headers;
  /** The answer's headers, once it came. */
  answer: Headers | null;
  at: number;
}

/** A fetch that records each request the client makes (path without the version prefix) and its answer's status. */
export function recordingFetch(): { fetch: typeof fetch; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  return {
    calls,
    fetch: async (input, init) => {
      const call: RecordedCall = {
        method: init?.method ?? 'GET',
        path: new URL(String(input)).pathname.replace(/^\/v\d+\.\d+/, '') || '/',
        status: null,
        headers: new Headers(init?.headers),
        answer: null,
        at: Date.now(),
      };
      calls.push(call);
      const response = await fetch(input, init);
      call.status = response.status;
      call.answer = response.headers;
      return response;
    },
  };
}

export interface TestUser {
  credentials: LoginRequest & { username: string; password: string };
  userId: string;
}

/** Registers a new user through the client; returns what logs them in. */
export async function registerUser(baseUrl: string): Promise<TestUser> {
  const username = `client_${randomBytes(5).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const user = await createPaymentsClient({ baseUrl }).users.register({
    username,
    email: `${username}@example.com`,
    password,
  });
  return { credentials: { username, password }, userId: user.id };
}

/** A new user and a client that logs in as them. */
export async function signedInClient<V extends ApiVersion = '1.1'>(
  baseUrl: string,
  options: Partial<ClientOptions<V>> = {},
): Promise<{ client: PaymentsClient<V>; user: TestUser }> {
  const user = await registerUser(baseUrl);
  const client = createPaymentsClient<V>({ baseUrl, credentials: user.credentials, ...options });
  return { client, user };
}
