import { expect } from 'chai';
import { parseProviderEvent } from '../src/domain/provider-events.js';

/** A Stripe Connect `account.updated`, as Stripe sends it to a platform's Connect endpoint. */
function accountUpdated(overrides: Record<string, unknown> = {}, object: Record<string, unknown> = {}) {
  return {
    id: 'evt_acct_1',
    object: 'event',
    type: 'account.updated',
    created: 1_790_000_000,
    livemode: false,
    account: 'acct_1',
    data: {
      object: {
        id: 'acct_1',
        object: 'account',
        payouts_enabled: false,
        requirements: {
          currently_due: ['individual.id_number'],
          disabled_reason: 'requirements.past_due',
          eventually_due: ['individual.id_number'],
        },
        ...object,
      },
    },
    ...overrides,
  };
}

describe('account.updated', () => {
  it("publishes the account's readiness with the event's created, for the ledger to order them", () => {
    const event = parseProviderEvent(accountUpdated());
    expect(event).to.include({ eventId: 'evt_acct_1', type: 'account.updated', payment: null });
    expect(event?.payoutAccount).to.deep.equal({
      account_id: 'acct_1',
      payouts_enabled: false,
      currently_due: ['individual.id_number'],
      disabled_reason: 'requirements.past_due',
      created: 1_790_000_000,
      provider_event_id: 'evt_acct_1',
      livemode: false,
    });
  });

  it('reads an account with no requirements as nothing due', () => {
    const event = parseProviderEvent(accountUpdated({}, { payouts_enabled: true, requirements: null }));
    expect(event?.payoutAccount).to.include({ payouts_enabled: true, disabled_reason: null });
    expect(event?.payoutAccount?.currently_due).to.deep.equal([]);
  });

  it('records with no effect an event whose envelope names another account than its object', () => {
    const event = parseProviderEvent(accountUpdated({ account: 'acct_someone_else' }));
    expect(event).to.include({ eventId: 'evt_acct_1', payment: null, payoutAccount: null });
  });

  it('refuses an account.updated without created, or whose object is not an account', () => {
    const { created: _created, ...undated } = accountUpdated();
    expect(parseProviderEvent(undated)).to.equal(null);
    expect(parseProviderEvent(accountUpdated({}, { object: 'payout' }))).to.equal(null);
    expect(parseProviderEvent(accountUpdated({}, { payouts_enabled: 'yes' }))).to.equal(null);
  });
});
