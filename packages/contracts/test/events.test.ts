import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent, validateEvent } from '../src/events.js';

describe('event contracts', () => {
  const valid = () =>
    createEvent(
      'PaymentProcessed',
      { transaction_id: randomUUID(), payment_id: 'p', status: 'completed', source: 'payment' },
      { id: randomUUID(), correlationId: 'req-1' },
    );

  it('accepts a well-formed PaymentProcessed envelope', () => {
    expect(validateEvent(valid()).ok).to.equal(true);
  });

  it('rejects an unknown event type', () => {
    const result = validateEvent({ ...valid(), type: 'PaymentTeleported' });
    expect(result.ok).to.equal(false);
  });

  it('rejects data that does not match the type schema, naming the field', () => {
    const event = valid();
    const result = validateEvent({ ...event, data: { ...event.data, status: 'teleported' } });
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.errors.join()).to.contain('/data/status');
  });

  it('rejects an envelope without an id', () => {
    const { id: _id, ...rest } = valid();
    expect(validateEvent(rest).ok).to.equal(false);
  });
});
