import { randomBytes } from 'node:crypto';
import {
  createPaymentsClient,
  type PaymentsClient,
  type RawResponse,
  type Transaction,
} from '@payments/client';
import { eventually } from '@payments/testkit';
import { providerSignature } from './provider-events.js';

/** An answer as a test reads it: any status, the body parsed when it is JSON, and the text. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- responses are asserted field by field
export type ApiResponse = RawResponse<any>;

export interface RawCall {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent exactly as given. */
  raw?: string;
  /** The bearer token to send; none when left out. */
  token?: string | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * The HTTP a test asserts on, through `@payments/client`'s `rawRequest`: each path exactly as the test writes it
 * (an unprefixed API path is served in 1.0, `/v1.1/…` in 1.1; `/webhook/…`, probes and a service's own routes have
 * no version), with the token the test names or none, never retried, within 15 s. Only adapts call shapes: the
 * request itself is the client's. `target` is a base URL, or a system whose gateway is read at the first call (one
 * a suite's fixture starts later).
 */
export function rawApi(target: string | { readonly gatewayUrl: string }) {
  let client: PaymentsClient | undefined;
  const request = (method: string, path: string, call: RawCall = {}): Promise<ApiResponse> => {
    client ??= createPaymentsClient({ baseUrl: typeof target === 'string' ? target : target.gatewayUrl });
    return client.rawRequest(method, path, {
      versioned: false,
      timeoutMs: 15_000,
      ...(call.body !== undefined && { body: call.body }),
      ...(call.raw !== undefined && { rawBody: call.raw }),
      ...(call.headers && { headers: call.headers }),
      ...(call.token ? { token: call.token } : { auth: false }),
    });
  };
  return {
    request,
    get: (path: string, token?: string) => request('GET', path, { token }),
    post: (path: string, body?: unknown, token?: string, headers?: Record<string, string>) =>
      request('POST', path, { body, token, headers }),
    put: (path: string, body: unknown, token?: string, headers?: Record<string, string>) =>
      request('PUT', path, { body, token, headers }),
    delete: (path: string, token?: string) => request('DELETE', path, { token }),
  };
}

export type RawApi = ReturnType<typeof rawApi>;

export interface TestUser {
  username: string;
  password: string;
  userId: string;
  /** The token of the login `signUp` made; `client` sends it too (and never logs in again by itself). */
  token: string;
  /** A client acting as this user, in version 1.1. */
  client: PaymentsClient<'1.1'>;
}

/** Registers a new user and logs them in through the client: the user factory of the tests that drive the API. */
export async function signUp(baseUrl: string, headers?: Record<string, string>): Promise<TestUser> {
  const username = `user_${randomBytes(5).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const client = createPaymentsClient({ baseUrl, ...(headers && { headers }) });
  const user = await client.users.register({ username, email: `${username}@example.com`, password });
  // Without credentials the client keeps the token of this login, as the tests' raw calls do.
  const { token } = await client.auth.login({ username, password });
  return { username, password, userId: user.id, token, client };
}

/**
 * Confirms a pending deposit or withdrawal as the provider would, through the unsigned webhook (which the system
 * must enable), and resolves with the transaction once it has completed.
 */
export async function confirmPayment(
  client: PaymentsClient<'1.1'>,
  transactionId: string,
): Promise<Transaction<'1.1'>> {
  const webhook = await client.rawRequest('POST', '/webhook/payment', {
    versioned: false,
    auth: false,
    body: { payment_id: transactionId, status: 'completed' },
  });
  if (webhook.status !== 200) throw new Error(`webhook answered ${webhook.status}: ${webhook.text}`);
  const transaction = await client.transactions.waitUntilSettled(transactionId, {
    intervalMs: 50,
    waitMs: 10_000,
  });
  if (transaction.status !== 'completed') {
    throw new Error(`transaction ${transactionId} did not complete: ${JSON.stringify(transaction)}`);
  }
  return transaction;
}

/** Deposits into an account and confirms the payment as the provider would; resolves once it has completed. */
export async function depositConfirmed(
  client: PaymentsClient<'1.1'>,
  accountId: string,
  amount: number | string,
  currency: string,
): Promise<Transaction<'1.1'>> {
  const accepted = await client.money.deposit(accountId, { amount, currency });
  return confirmPayment(client, accepted.id);
}

/** A user with an account. */
export type Customer = TestUser & { accountId: string };

/** A new user with an account in `currency` (USD by default), and a linked payout account when asked. */
export async function signUpWithAccount(
  baseUrl: string,
  options: { currency?: string; payoutAccount?: boolean } = {},
): Promise<Customer> {
  const user = await signUp(baseUrl);
  const account = await user.client.accounts.open({ currency: options.currency ?? 'USD' });
  if (options.payoutAccount) await user.client.payoutAccount.link();
  return { ...user, accountId: account.id };
}

/**
 * A deposit of `amount` USD by `who`, once the provider has prepared its payment: its payment page's address and
 * client secret, as its owner is shown them.
 */
export async function depositToPay(
  who: Customer,
  amount: number,
): Promise<{ id: string; paymentUrl: string; clientSecret: string }> {
  const { id } = await who.client.money.deposit(who.accountId, { amount, currency: 'USD' });
  const shown = await eventually(
    () => who.client.transactions.get(id),
    (deposit) => typeof deposit.provider_payment?.payment_url === 'string',
    { timeoutMs: 15_000, what: `the payment page of deposit ${id}` },
  );
  const { payment_url: paymentUrl, client_secret: clientSecret } = shown.provider_payment as {
    payment_url: string;
    client_secret: string;
  };
  return { id, paymentUrl, clientSecret };
}

/** Posts a provider event (an object, or the exact body) to `/webhook/provider`, signed with `secret` as Stripe signs. */
export function postProviderEvent(api: RawApi, event: object | string, secret: string): Promise<ApiResponse> {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  return api.request('POST', '/webhook/provider', {
    raw: body,
    headers: { 'content-type': 'application/json', 'provider-signature': providerSignature(body, secret) },
  });
}
