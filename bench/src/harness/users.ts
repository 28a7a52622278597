import { randomBytes } from 'node:crypto';
import { createPaymentsClient, type PaymentsClient } from '@payments/client';

/** The typed client (`@payments/client`) at the API version the bench speaks. */
export type BenchClient = PaymentsClient<'1.1'>;

export interface BenchUser {
  userId: string;
  username: string;
  password: string;
  /** The user's client, logged in: set-up, reads and checks go through it. */
  client: BenchClient;
  /**
   * The client's bearer token, for the raw requests of load loops and injected faults (harness/http-client.ts).
   * The client refreshes its token only when it makes a call near the token's expiry; the bench and the drills run
   * with a 1-hour token lifetime.
   */
  token: string;
}

/** A client of the gateway that logs in with `credentials` on its first authenticated call (an admin, say). */
export function clientFor(
  gatewayUrl: string,
  credentials: { username: string; password: string },
): BenchClient {
  return createPaymentsClient({ baseUrl: gatewayUrl, apiVersion: '1.1', credentials });
}

/** Registers a new user through the gateway and logs them in, as a customer would. */
export async function signUp(gatewayUrl: string, prefix = 'bench'): Promise<BenchUser> {
  const username = `${prefix}_${randomBytes(5).toString('hex')}`;
  const password = `pw-${randomBytes(9).toString('hex')}`;
  const client = clientFor(gatewayUrl, { username, password });
  const user = await client.users.register({ username, email: `${username}@example.com`, password });
  const { token } = await client.auth.login({ username, password });
  return { userId: user.id, username, password, client, token };
}
