import { expect } from 'chai';
import { CURRENCY_OPERATIONS } from '../src/operations/currency-operations.js';
import { DEAD_LETTER_OPERATIONS } from '../src/operations/dead-letter-operations.js';
import { EVENT_OPERATIONS } from '../src/operations/event-operations.js';
import { GATEWAY_OPERATIONS } from '../src/operations/gateway-operations.js';
import { IDENTITY_OPERATIONS } from '../src/operations/identity-operations.js';
import { OPERATIONS } from '../src/operations/index.js';
import { LEDGER_ADMIN_OPERATIONS } from '../src/operations/ledger-admin-operations.js';
import { LEDGER_OPERATIONS } from '../src/operations/ledger-operations.js';
import { PROVIDER_WEBHOOK_OPERATIONS } from '../src/operations/provider-webhook-operations.js';
import { WEBHOOK_ENDPOINT_OPERATIONS } from '../src/operations/webhook-endpoint-operations.js';

describe('the declared operations', () => {
  it('declare each operationId once, across every area', () => {
    const ids = [
      GATEWAY_OPERATIONS,
      IDENTITY_OPERATIONS,
      DEAD_LETTER_OPERATIONS,
      LEDGER_ADMIN_OPERATIONS,
      LEDGER_OPERATIONS,
      CURRENCY_OPERATIONS,
      WEBHOOK_ENDPOINT_OPERATIONS,
      EVENT_OPERATIONS,
      PROVIDER_WEBHOOK_OPERATIONS,
    ].flatMap((area) => Object.keys(area));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).to.deep.equal([]);
    expect(Object.keys(OPERATIONS)).to.have.length(ids.length);
  });

  it('declare each method and path once', () => {
    const calls = Object.values(OPERATIONS).map(({ method, path }) => `${method} ${path}`);
    expect(calls.filter((call, i) => calls.indexOf(call) !== i)).to.deep.equal([]);
  });

  it('name a queue in the path of every operation its consumer answers, and only there', () => {
    for (const [operationId, { path, owner }] of Object.entries(OPERATIONS)) {
      expect(path.includes('{queue}'), operationId).to.equal(owner === 'consumer of {queue}');
    }
  });
});
