import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { signWebhookPayload, signWebhookPayloadWithSecrets } from '@payments/service-kit';
import { verifyWebhookEvent, WebhookSignatureError, type WebhookEvent } from '../src/index.js';

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

const failure = (run: () => unknown): WebhookSignatureError => {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookSignatureError);
    return error as WebhookSignatureError;
  }
  return expect.fail('verified what it should have refused');
};

describe('verifyWebhookEvent, against the signatures the system makes (service-kit’s signer)', () => {
  it('returns the event, typed, for a body signed with the secret', () => {
    const event: WebhookEvent = verifyWebhookEvent(body, signWebhookPayload(body, SECRET, T), SECRET, {
      now: NOW,
    });
    expect(event).to.deep.equal(JSON.parse(body));
    if (event.type === 'account.created') expect(event.data.object.currency).to.equal('USD');
    else expect.fail(`unexpected type ${event.type}`);
  });

  it('verifies the raw bytes, a Buffer as well as a string, and nothing re-serialised', () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect(verifyWebhookEvent(Buffer.from(body), header, SECRET, { now: NOW }).id).to.be.a('string');
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    expect(failure(() => verifyWebhookEvent(reformatted, header, SECRET, { now: NOW })).reason).to.equal(
      'mismatch',
    );
  });

  it('during a rotation accepts the delivery signed with both secrets, holding either one', () => {
    const header = signWebhookPayloadWithSecrets(body, [SECRET, OLD_SECRET], T);
    expect(verifyWebhookEvent(body, header, OLD_SECRET, { now: NOW }).type).to.equal('account.created');
    expect(verifyWebhookEvent(body, header, [SECRET], { now: NOW }).type).to.equal('account.created');
    // And a receiver holding both secrets accepts a delivery signed with only the new one.
    expect(
      verifyWebhookEvent(body, signWebhookPayload(body, SECRET, T), [OLD_SECRET, SECRET], { now: NOW }).type,
    ).to.equal('account.created');
  });

  it('refuses a wrong secret, a changed body and a signature of another timestamp', () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect(failure(() => verifyWebhookEvent(body, header, 'whsec_other', { now: NOW })).reason).to.equal(
      'mismatch',
    );
    expect(
      failure(() => verifyWebhookEvent(body.replace('USD', 'EUR'), header, SECRET, { now: NOW })).reason,
    ).to.equal('mismatch');
    const moved = header.replace(`t=${T}`, `t=${T + 1}`);
    expect(failure(() => verifyWebhookEvent(body, moved, SECRET, { now: NOW })).reason).to.equal('mismatch');
  });

  it('refuses a timestamp beyond the tolerance either way, 300 s unless told otherwise', () => {
    const header = signWebhookPayload(body, SECRET, T);
    expect(verifyWebhookEvent(body, header, SECRET, { now: NOW + 300_000 }).type).to.equal('account.created');
    expect(failure(() => verifyWebhookEvent(body, header, SECRET, { now: NOW + 301_000 })).reason).to.equal(
      'stale',
    );
    expect(failure(() => verifyWebhookEvent(body, header, SECRET, { now: NOW - 301_000 })).reason).to.equal(
      'stale',
    );
    expect(
      failure(() => verifyWebhookEvent(body, header, SECRET, { now: NOW + 11_000, toleranceSeconds: 10 }))
        .reason,
    ).to.equal('stale');
  });

  it('refuses a missing or malformed header, and one with no v1 signature (other schemes are ignored)', () => {
    const v1 = signWebhookPayload(body, SECRET, T).split(',')[1] as string;
    expect(failure(() => verifyWebhookEvent(body, undefined, SECRET, { now: NOW })).reason).to.equal(
      'missing',
    );
    expect(failure(() => verifyWebhookEvent(body, '  ', SECRET, { now: NOW })).reason).to.equal('missing');
    expect(failure(() => verifyWebhookEvent(body, v1, SECRET, { now: NOW })).reason).to.equal('malformed');
    expect(failure(() => verifyWebhookEvent(body, `t=soon,${v1}`, SECRET, { now: NOW })).reason).to.equal(
      'malformed',
    );
    expect(failure(() => verifyWebhookEvent(body, `t=${T},v0=abc`, SECRET, { now: NOW })).reason).to.equal(
      'no_signature',
    );
    expect(verifyWebhookEvent(body, `t=${T},v0=abc,${v1}`, SECRET, { now: NOW }).type).to.equal(
      'account.created',
    );
  });

  it('refuses a signed body that is not an event', () => {
    const notAnEvent = JSON.stringify({ hello: 'world' });
    const header = signWebhookPayload(notAnEvent, SECRET, T);
    expect(failure(() => verifyWebhookEvent(notAnEvent, header, SECRET, { now: NOW })).reason).to.equal(
      'invalid_payload',
    );
  });
});
