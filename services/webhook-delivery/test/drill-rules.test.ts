import { expect } from 'chai';
import {
  drillResult,
  judgeCase,
  planDrill,
  type CaseAnswer,
  type PlannedCase,
} from '../src/drill/drill-plan.js';

const NOW = 1_800_000_000;
const plan = planDrill(
  'drill_0123456789abcdef01234567',
  ['transaction.completed', 'account.created'],
  '1.1',
  NOW,
);
const caseOf = (name: PlannedCase['name']) => plan.cases.find((c) => c.name === name)!;
const answer = (statusCode: number | null, body: string | null = null): CaseAnswer => ({
  statusCode,
  latencyMs: statusCode === null ? null : 3,
  error: statusCode === null ? 'ECONNREFUSED' : null,
  body,
});
const judge = (name: PlannedCase['name'], given: CaseAnswer) => judgeCase(caseOf(name), given, 300).outcome;

describe('webhook drill rules', () => {
  it('plans six cases of drill events, the duplicate the very bytes of the valid one', () => {
    expect(plan.cases.map((c) => c.name)).to.deep.equal([
      'valid',
      'duplicate',
      'out_of_order_later',
      'out_of_order_earlier',
      'stale_timestamp',
      'wrong_signature',
    ]);
    expect(caseOf('duplicate').body).to.equal(caseOf('valid').body);
    expect(new Set(plan.cases.map((c) => c.eventId)).size).to.equal(5);
    expect(caseOf('out_of_order_earlier').created).to.be.below(caseOf('out_of_order_later').created);
    for (const planned of plan.cases) {
      const event = JSON.parse(planned.body) as Record<string, unknown>;
      expect(event).to.include({ drill: true, livemode: false, object: 'event' });
      expect(event.id).to.match(/^evt_drill_[0-9a-f]{24}$/);
      expect(event.type).to.match(/^drill\.(transaction\.completed|account\.created)$/);
      expect(event.data).to.deep.equal({
        object: {
          id: 'drill_0123456789abcdef01234567',
          object: 'webhook_drill',
          event_type: (event.type as string).slice('drill.'.length),
        },
      });
    }
    expect(plan.cases.filter((c) => c.expected === 'reject').map((c) => c.signing)).to.deep.equal([
      'stale',
      'forged',
    ]);
  });

  it('passes a rejected stale or forged event, and fails one accepted or left unanswered', () => {
    expect(judge('stale_timestamp', answer(400))).to.equal('passed');
    expect(judge('wrong_signature', answer(401))).to.equal('passed');
    expect(judge('stale_timestamp', answer(200))).to.equal('failed');
    expect(judge('wrong_signature', answer(204))).to.equal('failed');
    expect(judge('wrong_signature', answer(null))).to.equal('failed');
  });

  it('confirms the duplicate only when the receiver says it recognised it', () => {
    expect(judge('duplicate', answer(200, '{"duplicate": true}'))).to.equal('passed');
    expect(judge('duplicate', answer(200, '{"duplicate": false}'))).to.equal('failed');
    expect(judge('duplicate', answer(200, 'ok'))).to.equal('unconfirmed');
    expect(judge('duplicate', answer(409, '{"duplicate": true}'))).to.equal('failed');
  });

  it('fails a valid event refused, or one the receiver calls a duplicate though it never had it', () => {
    expect(judge('valid', answer(200))).to.equal('passed');
    expect(judge('valid', answer(200, '{"duplicate": false}'))).to.equal('passed');
    expect(judge('valid', answer(200, '{"duplicate": true}'))).to.equal('failed');
    expect(judge('out_of_order_earlier', answer(422))).to.equal('failed');
    expect(judge('valid', answer(null))).to.equal('failed');
  });

  it('sums up: failed over incomplete over unconfirmed over passed', () => {
    expect(drillResult(['passed', 'passed'])).to.equal('passed');
    expect(drillResult(['passed', 'unconfirmed'])).to.equal('unconfirmed');
    expect(drillResult(['unconfirmed', 'not_sent'])).to.equal('incomplete');
    expect(drillResult(['not_sent', 'failed', 'passed'])).to.equal('failed');
  });
});
