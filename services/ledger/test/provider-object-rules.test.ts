import { expect } from 'chai';
import { loadConfig } from '@payments/service-kit';
import { LedgerConfigSchema } from '../src/index.js';
import { providerObjectPolicyOf } from '../src/config.js';
import {
  matchProviderObject,
  type KnownObject,
  type ObjectClaim,
  type RecordedRequest,
} from '../src/domain/provider-object.js';

const DEPOSIT = '33333333-3333-4333-8333-333333333333';
const OTHER = '44444444-4444-4444-8444-444444444444';
const TEST_MODE = { standIn: true, livemode: false };

const claim = (overrides: Partial<ObjectClaim> = {}): ObjectClaim => ({
  movement: 'payment',
  objectId: 'pi_A',
  hint: DEPOSIT,
  livemode: false,
  account: null,
  ...overrides,
});

const request = (overrides: Partial<RecordedRequest> = {}): RecordedRequest => ({
  transactionId: DEPOSIT,
  kind: 'payment',
  state: 'created',
  reference: 'pi_A',
  destination: null,
  ...overrides,
});

const recordedAs = (recorded: RecordedRequest): KnownObject => ({
  recorded,
  named: { transactionId: recorded.transactionId, request: recorded },
});

describe('ledger rules: which transaction a provider object may move money for', () => {
  it('matches the object the ledger recorded for the transaction', () => {
    expect(matchProviderObject(claim(), recordedAs(request()), TEST_MODE)).to.deep.equal({
      outcome: 'matched',
      transactionId: DEPOSIT,
    });
  });

  it('refuses another object naming the transaction in its metadata (a second PaymentIntent)', () => {
    const known = { recorded: null, named: { transactionId: DEPOSIT, request: request() } };
    const match = matchProviderObject(claim({ objectId: 'pi_B' }), known, TEST_MODE);
    expect(match).to.include({ outcome: 'unmatched', kind: 'foreign_object', transactionId: DEPOSIT });
    expect(match).to.have.property('reason').that.includes('pi_A');
  });

  it('refuses an object naming a transaction that never asked the provider', () => {
    const known = { recorded: null, named: { transactionId: DEPOSIT, request: null } };
    expect(matchProviderObject(claim({ objectId: 'pi_B' }), known, TEST_MODE)).to.include({
      outcome: 'unmatched',
      kind: 'foreign_object',
    });
  });

  it('refuses an object naming nothing the ledger knows', () => {
    const known = { recorded: null, named: null };
    expect(matchProviderObject(claim({ objectId: 'pi_B' }), known, TEST_MODE)).to.include({
      outcome: 'unmatched',
      kind: 'unknown_to_ledger',
      transactionId: null,
    });
  });

  it('waits when the transaction asked the provider and its answer is not recorded yet', () => {
    const known = {
      recorded: null,
      named: { transactionId: DEPOSIT, request: request({ state: 'requested', reference: null }) },
    };
    expect(matchProviderObject(claim(), known, TEST_MODE)).to.deep.equal({
      outcome: 'too_early',
      transactionId: DEPOSIT,
    });
  });

  it('refuses the recorded object when its metadata names another transaction', () => {
    expect(matchProviderObject(claim({ hint: OTHER }), recordedAs(request()), TEST_MODE)).to.include({
      outcome: 'unmatched',
      kind: 'foreign_object',
      transactionId: DEPOSIT,
    });
  });

  it('refuses the recorded object in another mode than the provider key works in', () => {
    expect(matchProviderObject(claim({ livemode: true }), recordedAs(request()), TEST_MODE)).to.include({
      outcome: 'unmatched',
    });
    const live = { standIn: false, livemode: true };
    expect(matchProviderObject(claim(), recordedAs(request()), live)).to.include({ outcome: 'unmatched' });
    expect(matchProviderObject(claim({ livemode: true }), recordedAs(request()), live)).to.include({
      outcome: 'matched',
    });
  });

  it("refuses a payment on a connected account, and a payout on another account than the user's", () => {
    expect(matchProviderObject(claim({ account: 'acct_user' }), recordedAs(request()), TEST_MODE)).to.include(
      { outcome: 'unmatched' },
    );
    const payout = request({ kind: 'payout', reference: 'po_A', destination: 'acct_user' });
    const paid = claim({ movement: 'payout', objectId: 'po_A', account: 'acct_user' });
    expect(matchProviderObject(paid, recordedAs(payout), TEST_MODE)).to.include({ outcome: 'matched' });
    expect(matchProviderObject({ ...paid, account: 'acct_other' }, recordedAs(payout), TEST_MODE)).to.include(
      { outcome: 'unmatched' },
    );
    expect(matchProviderObject({ ...paid, account: null }, recordedAs(payout), TEST_MODE)).to.include({
      outcome: 'unmatched',
    });
  });

  it('refuses a payment event about a payout the ledger recorded', () => {
    const payout = request({ kind: 'payout', reference: 'po_A', destination: 'acct_user' });
    expect(matchProviderObject(claim({ objectId: 'po_A' }), recordedAs(payout), TEST_MODE)).to.include({
      outcome: 'unmatched',
    });
  });

  it("takes SPEC's stand-in (the object is the transaction itself) only where stand-ins are on", () => {
    const standIn = claim({ objectId: DEPOSIT.toUpperCase(), hint: DEPOSIT });
    const nothingKnown = { recorded: null, named: null };
    expect(matchProviderObject(standIn, nothingKnown, TEST_MODE)).to.deep.equal({
      outcome: 'matched',
      transactionId: DEPOSIT,
    });
    expect(matchProviderObject(standIn, nothingKnown, { standIn: false, livemode: false })).to.include({
      outcome: 'unmatched',
      kind: 'foreign_object',
    });
    expect(matchProviderObject({ ...standIn, hint: OTHER }, nothingKnown, TEST_MODE)).to.include({
      outcome: 'unmatched',
    });
  });
});

describe('ledger: STAND_IN_CONFIRMATIONS and the provider key', () => {
  const policy = (env: Record<string, string>) => providerObjectPolicyOf(loadConfig(LedgerConfigSchema, env));
  const stripe = { PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_abc' };

  it("takes SPEC's stand-ins everywhere but in production asking Stripe, unless told to", () => {
    expect(policy({})).to.deep.equal({ standIn: true, livemode: false });
    expect(policy(stripe)).to.deep.equal({ standIn: true, livemode: false });
    expect(policy({ NODE_ENV: 'production' })).to.include({ standIn: true });
    expect(policy({ ...stripe, NODE_ENV: 'production' })).to.include({ standIn: false });
    expect(policy({ ...stripe, NODE_ENV: 'production', STAND_IN_CONFIRMATIONS: 'true' })).to.include({
      standIn: true,
    });
    expect(policy({ STAND_IN_CONFIRMATIONS: 'false' })).to.include({ standIn: false });
  });

  it('expects live-mode objects of a live key, and test-mode ones otherwise', () => {
    expect(policy({ ...stripe, STRIPE_SECRET_KEY: 'sk_live_abc' })).to.include({ livemode: true });
    expect(policy({ ...stripe, STRIPE_SECRET_KEY: 'rk_live_abc' })).to.include({ livemode: true });
    expect(policy({ ...stripe, STRIPE_SECRET_KEY: 'rk_test_abc' })).to.include({ livemode: false });
  });
});
