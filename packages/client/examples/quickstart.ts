// The README's walk-through as one program: register, log in, receive and verify webhook events, deposit with an
// idempotency key, list with for await, handle a typed error, read in another version. Against `pnpm start`
// (with WEBHOOK_ALLOW_PRIVATE_URLS=true, so that the gateway may deliver to this machine):
//   PAYMENTS_URL=http://localhost:8080 node quickstart.js
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPaymentsClient,
  UnprocessableEntityError,
  verifyWebhookEvent,
  type Transaction,
  type WebhookEvent,
} from '@payments/client';

const baseUrl = process.env.PAYMENTS_URL ?? 'http://localhost:8080';

// Register (no token needed), then a client that logs in with these credentials when it first needs a token and
// refreshes the token before it expires.
const username = `demo_${randomUUID().slice(0, 8)}`;
const password = 'correct horse battery';
await createPaymentsClient({ baseUrl }).users.register({
  username,
  email: `${username}@example.com`,
  password,
});
const client = createPaymentsClient({ baseUrl, apiVersion: '1.1', credentials: { username, password } });

// A receiver for the events the system POSTs: verify the signature over the raw body before trusting anything.
let secret = '';
const events: WebhookEvent<'1.1'>[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    verifyWebhookEvent<'1.1'>(Buffer.concat(chunks), req.headers['stripe-signature'], secret).then(
      (event) => {
        events.push(event);
        res.writeHead(200).end();
      },
      () => res.writeHead(400).end(),
    );
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;
const endpoint = await client.webhookEndpoints.create({
  url: `http://127.0.0.1:${port}/hooks`,
  events: ['transaction.completed'],
});
secret = endpoint.secret;

// A deposit: the key makes any retry of it, the client's or yours, take effect once.
const account = await client.accounts.open({ currency: 'USD' });
const deposit = await client.money.deposit(
  account.id,
  { amount: '100.00', currency: 'USD' },
  { idempotencyKey: `deposit-${account.id}-1` },
);
const settled = await client.transactions.waitUntilSettled(deposit.id);
console.log(`Deposit ${settled.id}: ${settled.status}, fee ${settled.fee}`);

// Every transaction of the account, page after page.
for await (const transaction of client.transactions.list({ account_id: account.id })) {
  console.log(`  ${transaction.type} ${transaction.amount} ${transaction.currency} ${transaction.status}`);
}

// Errors are typed: a 422 carries its code, the problem body, the field at fault and the request id.
const euros = await client.accounts.open({ currency: 'EUR' });
try {
  await client.money.transfer(account.id, { amount: '1000.00', currency: 'USD', to_account_id: euros.id });
} catch (error) {
  if (!(error instanceof UnprocessableEntityError)) throw error;
  console.log(`Refused: ${error.code} (${error.problem?.detail}), request ${error.requestId}`);
}

// The same transaction read in version 1.0: its type has no `fee`.
const legacy = createPaymentsClient({ baseUrl, apiVersion: '1.0', credentials: { username, password } });
const old: Transaction<'1.0'> = await legacy.transactions.get(deposit.id);
console.log(`In 1.0: ${Object.keys(old).includes('fee') ? 'with' : 'without'} a fee field`);

// The deposit's completion, as the receiver got it.
const deadline = Date.now() + 30_000;
while (!events.some((event) => event.type === 'transaction.completed') && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const completed = events.find((event) => event.type === 'transaction.completed');
if (!completed || completed.type !== 'transaction.completed') throw new Error('no event arrived in 30 s');
console.log(`Verified ${completed.type} for ${completed.data.object.id}`);

await client.webhookEndpoints.delete(endpoint.id);
await client.auth.logout();
receiver.close();
