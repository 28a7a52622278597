import { expect } from 'chai';
import Stripe from 'stripe';
import { signWebhookPayload, verifyWebhookSignature } from '@payments/service-kit';

const SECRET = 'whsec_test_current';
const NEXT_SECRET = 'whsec_test_next';
const BODY = JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' });
const NOW = Date.UTC(2025, 0, 1);
const T = Math.floor(NOW / 1000);

describe('webhook signatures', () => {
  it('verifies a payload it signed', () => {
    const header = signWebhookPayload(BODY, SECRET, T);
    expect(header).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(BODY, header, [SECRET], 300, NOW)).to.deep.equal({
      ok: true,
      timestamp: T,
    });
  });

  it('verifies the raw bytes as given, whether a string or a Buffer', () => {
    const header = signWebhookPayload(Buffer.from(BODY), SECRET, T);
    expect(verifyWebhookSignature(BODY, header, [SECRET], 300, NOW).ok).to.equal(true);
  });

  it('accepts a header made by the stripe package for the same secret', () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET });
    expect(verifyWebhookSignature(BODY, header, [SECRET]).ok).to.equal(true);
  });

  it('signs headers the stripe package accepts', () => {
    const header = signWebhookPayload(BODY, SECRET);
    expect(Stripe.webhooks.signature?.verifyHeader(BODY, header, SECRET)).to.equal(true);
  });

  it('accepts any configured secret, so secrets can be rotated', () => {
    const header = signWebhookPayload(BODY, NEXT_SECRET, T);
    expect(verifyWebhookSignature(BODY, header, [SECRET, NEXT_SECRET], 300, NOW).ok).to.equal(true);
  });

  it('accepts a header with several v1 entries when one of them matches', () => {
    const other = signWebhookPayload(BODY, 'whsec_unknown', T).split(',')[1];
    const good = signWebhookPayload(BODY, SECRET, T).split(',')[1];
    const header = `t=${T},${other},v0=abc,${good}`;
    expect(verifyWebhookSignature(BODY, header, [SECRET], 300, NOW).ok).to.equal(true);
  });

  it('accepts a timestamp exactly at the tolerance in either direction', () => {
    for (const t of [T - 300, T + 300]) {
      expect(
        verifyWebhookSignature(BODY, signWebhookPayload(BODY, SECRET, t), [SECRET], 300, NOW).ok,
      ).to.equal(true);
    }
  });

  const failures: [string, string | undefined, string][] = [
    ['a missing header', undefined, 'missing'],
    ['an empty header', '  ', 'missing'],
    ['a header without a timestamp', `v1=${'a'.repeat(64)}`, 'malformed'],
    ['a non-numeric timestamp', `t=soon,v1=${'a'.repeat(64)}`, 'malformed'],
    ['two timestamps', `t=${T},t=${T},v1=${'a'.repeat(64)}`, 'malformed'],
    ['a header that is not a list of k=v', 'garbage', 'malformed'],
    ['a header longer than any real one', `t=${T},v1=${'a'.repeat(5000)}`, 'malformed'],
    ['only a v0 signature', signWebhookPayload(BODY, SECRET, T).replace('v1=', 'v0='), 'no-signature'],
    ['a v1 entry that is not a SHA-256 hex digest', `t=${T},v1=zz`, 'no-signature'],
    ['a signature made with another secret', signWebhookPayload(BODY, 'whsec_wrong', T), 'mismatch'],
    ['a timestamp 301 s old', signWebhookPayload(BODY, SECRET, T - 301), 'stale'],
    ['a timestamp 301 s in the future', signWebhookPayload(BODY, SECRET, T + 301), 'stale'],
  ];
  for (const [what, header, reason] of failures) {
    it(`rejects ${what} (${reason})`, () => {
      expect(verifyWebhookSignature(BODY, header, [SECRET], 300, NOW)).to.deep.equal({ ok: false, reason });
    });
  }

  it('rejects a body changed after signing', () => {
    const header = signWebhookPayload(BODY, SECRET, T);
    const tampered = BODY.replace('evt_1', 'evt_2');
    expect(verifyWebhookSignature(tampered, header, [SECRET], 300, NOW)).to.deep.equal({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a signature whose timestamp was changed after signing', () => {
    const header = signWebhookPayload(BODY, SECRET, T).replace(`t=${T}`, `t=${T + 1}`);
    expect(verifyWebhookSignature(BODY, header, [SECRET], 300, NOW).ok).to.equal(false);
  });
});
