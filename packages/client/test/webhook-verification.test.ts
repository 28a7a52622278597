import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { signWebhookPayload, signWebhookPayloadWithSecrets } from '@payments/service-kit';
import {
  generateTestHeaderString,
  verifyWebhookEvent,
  WebhookSignatureError,
  type WebhookEvent,
} from '../src/index.js';

const SECRET = 'whsec_current';
const OLD_SECRET = 'whsec_previous';
const NOW = Date.parse('2026-11-27T10:00:00Z');
const T = Math.floor(NOW / 1000);

/** A delivery body as webhook-delivery makes it (an account event, version 1.0). */
const body = JSON.stringify({
  id: randomUUID(),
  object: 'event',
  type: 'account.created',
  api_version: '1.0',
  created: T,
  created_at: new Date(NOW).toISOString(),
  data: {
    object: {
      id: randomUUID(),
      user_id: randomUUID(),
      currency: 'USD',
      balance: 0,
      available_balance: 0,
      metadata: {},
      created_at: new Date(NOW).toISOString(),
      updated_at: new Date(NOW).toISOString(),
    },
  },
});

/** Why a verification was refused (it must reject, with a WebhookSignatureError). */
const refusal = async (verification: Promise<unknown>): Promise<string> => {
  try {
    await verification;
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookSignatureError);
    return (error as WebhookSignatureError).reason;
  }
  return expect.fail('verified what it should have refused');
};

describe('verifyWebhookEvent, against the signatures the system makes (service-kit’s signer)', () => {
  it('returns the event, typed, for a body signed with the secret', async () => {
    const event: WebhookEvent = await verifyWebhookEvent(body, signWebhookPayload(body, SECRET, T), SECRET, {
      now: NOW,
    });
    expect(event).to.deep.equal(JSON.parse(body));
    if (event.type === 'account.created') expect(event.data.object.currency).to.equal('USD');
    else expect.fail(`unexpected type ${event.type}`);
  });

  it('verifies the raw bytes, a Buffer as well as a string, and nothing re-serialised', async () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect((await verifyWebhookEvent(Buffer.from(body), header, SECRET, { now: NOW })).id).to.be.a('string');
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    expect(await refusal(verifyWebhookEvent(reformatted, header, SECRET, { now: NOW }))).to.equal('mismatch');
  });

  it('during a rotation accepts the delivery signed with both secrets, holding either one', async () => {
    const header = signWebhookPayloadWithSecrets(body, [SECRET, OLD_SECRET], T);
    expect((await verifyWebhookEvent(body, header, OLD_SECRET, { now: NOW })).type).to.equal(
      'account.created',
    );
    expect((await verifyWebhookEvent(body, header, [SECRET], { now: NOW })).type).to.equal('account.created');
    // And a receiver holding both secrets accepts a delivery signed with only the new one.
    expect(
      (
        await verifyWebhookEvent(body, signWebhookPayload(body, SECRET, T), [OLD_SECRET, SECRET], {
          now: NOW,
        })
      ).type,
    ).to.equal('account.created');
  });

  it('refuses a wrong secret, a changed body and a signature of another timestamp', async () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect(await refusal(verifyWebhookEvent(body, header, 'whsec_other', { now: NOW }))).to.equal('mismatch');
    expect(
      await refusal(verifyWebhookEvent(body.replace('USD', 'EUR'), header, SECRET, { now: NOW })),
    ).to.equal('mismatch');
    const moved = header.replace(`t=${T}`, `t=${T + 1}`);
    expect(await refusal(verifyWebhookEvent(body, moved, SECRET, { now: NOW }))).to.equal('mismatch');
  });

  it('refuses a timestamp beyond the tolerance either way, 300 s unless told otherwise', async () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect((await verifyWebhookEvent(body, header, SECRET, { now: NOW + 300_000 })).type).to.equal(
      'account.created',
    );
    expect(await refusal(verifyWebhookEvent(body, header, SECRET, { now: NOW + 301_000 }))).to.equal('stale');
    expect(await refusal(verifyWebhookEvent(body, header, SECRET, { now: NOW - 301_000 }))).to.equal('stale');
    expect(
      await refusal(verifyWebhookEvent(body, header, SECRET, { now: NOW + 11_000, toleranceSeconds: 10 })),
    ).to.equal('stale');
  });

  it('refuses a missing or malformed header, and one with no v1 signature (other schemes are ignored)', async () => {
    const v1 = signWebhookPayload(body, SECRET, T).split(',')[1] as string;
    expect(await refusal(verifyWebhookEvent(body, undefined, SECRET, { now: NOW }))).to.equal('missing');
    expect(await refusal(verifyWebhookEvent(body, '  ', SECRET, { now: NOW }))).to.equal('missing');
    expect(await refusal(verifyWebhookEvent(body, v1, SECRET, { now: NOW }))).to.equal('malformed');
    expect(await refusal(verifyWebhookEvent(body, `t=soon,${v1}`, SECRET, { now: NOW }))).to.equal(
      'malformed',
    );
    expect(await refusal(verifyWebhookEvent(body, `t=${T},v0=abc`, SECRET, { now: NOW }))).to.equal(
      'no_signature',
    );
    expect((await verifyWebhookEvent(body, `t=${T},v0=abc,${v1}`, SECRET, { now: NOW })).type).to.equal(
      'account.created',
    );
  });

  it('refuses a signed body that is not an event', async () => {
    const notAnEvent = JSON.stringify({ hello: 'world' });
    const header = signWebhookPayload(notAnEvent, SECRET, T);
    expect(await refusal(verifyWebhookEvent(notAnEvent, header, SECRET, { now: NOW }))).to.equal(
      'invalid_payload',
    );
  });
});

describe('generateTestHeaderString, the signer for an integrator’s own tests', () => {
  it('makes the very header the system makes, for one secret and for a rotation’s two', async () => {
    expect(await generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T })).to.equal(
      signWebhookPayload(body, SECRET, T),
    );
    expect(
      await generateTestHeaderString({ payload: body, secret: [SECRET, OLD_SECRET], timestamp: T }),
    ).to.equal(signWebhookPayloadWithSecrets(body, [SECRET, OLD_SECRET], T));
  });

  it('signs now by default, and its header verifies; bytes and text sign alike', async () => {
    const header = await generateTestHeaderString({ payload: body, secret: SECRET });
    expect((await verifyWebhookEvent(body, header, SECRET)).type).to.equal('account.created');
    const bytes = new TextEncoder().encode(body);
    const fromBytes = await generateTestHeaderString({ payload: bytes.buffer, secret: SECRET, timestamp: T });
    expect(fromBytes).to.equal(
      await generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T }),
    );
    // A Buffer that is a view into a larger pool is read as its own bytes only.
    const pooled = Buffer.concat([Buffer.from('garbage'), Buffer.from(body)]).subarray(7);
    expect((await verifyWebhookEvent(pooled, fromBytes, SECRET, { now: NOW })).type).to.equal(
      'account.created',
    );
  });

  it('a tampered body, a wrong secret or an old timestamp does not verify', async () => {
    const header = await generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T });
    expect(await refusal(verifyWebhookEvent(`${body} `, header, SECRET, { now: NOW }))).to.equal('mismatch');
    expect(await refusal(verifyWebhookEvent(body, header, OLD_SECRET, { now: NOW }))).to.equal('mismatch');
    expect(await refusal(verifyWebhookEvent(body, header, SECRET, { now: NOW + 3_600_000 }))).to.equal(
      'stale',
    );
  });

  it('refuses what is not a signing: no secret, a timestamp that is not whole seconds', async () => {
    for (const options of [
      { payload: body, secret: [] },
      { payload: body, secret: SECRET, timestamp: 1.5 },
      { payload: body, secret: SECRET, timestamp: -1 },
    ]) {
      const error = await generateTestHeaderString(options).then(
        () => expect.fail('signed'),
        (caught: unknown) => caught,
      );
      expect(error).to.be.instanceOf(TypeError);
    }
  });
});

describe('webhook verification runs on WebCrypto alone', () => {
  it('needs nothing but globalThis.crypto.subtle: without it, it says so', async () => {
    const header = signWebhookPayload(body, SECRET, T);
    const original = Object.getOwnPropertyDescriptor(globalThis, 'crypto') as PropertyDescriptor;
    Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true });
    try {
      const error = await verifyWebhookEvent(body, header, SECRET, { now: NOW }).then(
        () => expect.fail('verified without WebCrypto'),
        (caught: unknown) => caught as Error,
      );
      expect(error).to.be.instanceOf(TypeError);
      expect(error.message).to.match(/WebCrypto/);
    } finally {
      Object.defineProperty(globalThis, 'crypto', original);
    }
    expect((await verifyWebhookEvent(body, header, SECRET, { now: NOW })).type).to.equal('account.created');
  });
});
