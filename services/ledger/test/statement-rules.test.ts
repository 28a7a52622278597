import { expect } from 'chai';
import { AppError } from '@payments/service-kit';
import { anAccount, thrownBy } from '@payments/test-support';
import {
  readBalanceMoment,
  readStatementPeriod,
  sumsFromLatest,
  withRunningBalance,
  type StatementEntry,
} from '../src/domain/statement.js';
import { renderStatement, renderStatementCsv } from '../src/http/presenters.js';
import type { StatementSlice } from '../src/use-cases/statements.js';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const DAY_MS = 86_400_000;

const refusal = (run: () => unknown) => thrownBy(run, AppError);

const entry = (id: number, amount: bigint, at: string, type: string | null = 'deposit'): StatementEntry => ({
  id: String(id),
  transactionId: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
  type,
  counterpartyAccountId: null,
  amount,
  createdAt: new Date(at),
  own: { reference: null, metadata: {} },
});

const account = anAccount({ userId: '22222222-2222-4222-8222-222222222222' });

describe('statement rules', () => {
  describe('readStatementPeriod', () => {
    it('defaults to the 30 days up to now', () => {
      const period = readStatementPeriod(undefined, undefined, NOW);
      expect(period.to).to.deep.equal(NOW);
      expect(NOW.getTime() - period.from.getTime()).to.equal(30 * DAY_MS);
    });

    it('reads offsets as the same instant in UTC', () => {
      const period = readStatementPeriod('2026-01-01T02:00:00+02:00', '2026-01-31T19:00:00-05:00', NOW);
      expect(period.from.toISOString()).to.equal('2026-01-01T00:00:00.000Z');
      expect(period.to.toISOString()).to.equal('2026-02-01T00:00:00.000Z');
    });

    it('counts the 30 default days back from a given end', () => {
      const period = readStatementPeriod(undefined, '2026-03-31T00:00:00Z', NOW);
      expect(period.from.toISOString()).to.equal('2026-03-01T00:00:00.000Z');
    });

    it('ends a period that reaches into the future now', () => {
      const period = readStatementPeriod('2026-11-01T00:00:00Z', '2027-01-01T00:00:00Z', NOW);
      expect(period.to).to.deep.equal(NOW);
    });

    it('accepts an empty period and refuses one that ends before it starts, or starts in the future', () => {
      const empty = readStatementPeriod('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', NOW);
      expect(empty.from).to.deep.equal(empty.to);
      const backwards = refusal(() =>
        readStatementPeriod('2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z', NOW),
      );
      expect(backwards.code).to.equal('VALIDATION_ERROR');
      expect(backwards.errors).to.deep.equal([
        { field: 'from', message: 'must not be after to, nor in the future' },
      ]);
      expect(refusal(() => readStatementPeriod('2027-01-01T00:00:00Z', undefined, NOW)).code).to.equal(
        'VALIDATION_ERROR',
      );
    });

    it('refuses a moment the format allows but no clock shows (a leap second)', () => {
      const error = refusal(() => readStatementPeriod('2016-12-31T23:59:60Z', undefined, NOW));
      expect(error.code).to.equal('VALIDATION_ERROR');
      expect(error.errors?.[0]?.field).to.equal('from');
    });
  });

  it('answers a balance asked for the future as of now', () => {
    expect(readBalanceMoment('2030-01-01T00:00:00Z', NOW)).to.deep.equal(NOW);
    expect(readBalanceMoment('2026-01-01T00:00:00+01:00', NOW).toISOString()).to.equal(
      '2025-12-31T23:00:00.000Z',
    );
  });

  describe('withRunningBalance', () => {
    it('adds each entry to the balance before it, through zero and below', () => {
      const lines = withRunningBalance(500n, [
        entry(1, -300n, '2026-01-01T00:00:00Z'),
        entry(2, -400n, '2026-01-02T00:00:00Z', 'reversal'),
        entry(3, 250n, '2026-01-03T00:00:00Z', null),
      ]);
      expect(lines.map((line) => line.balance)).to.deep.equal([200n, -200n, 50n]);
    });

    it('gives the same balances whether a period is read in one page or in many', () => {
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const entries = Array.from({ length: 200 }, (_, i) =>
        entry(i + 1, BigInt(random(2001) - 1000), new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()),
      );
      const opening = 12_345n;
      const whole = withRunningBalance(opening, entries).map((line) => line.balance);
      const paged: bigint[] = [];
      for (let start = 0; start < entries.length;) {
        const size = 1 + random(30);
        const before = entries.slice(0, start).reduce((sum, e) => sum + e.amount, opening);
        paged.push(...withRunningBalance(before, entries.slice(start, start + size)).map((l) => l.balance));
        start += size;
      }
      expect(paged).to.deep.equal(whole);
      expect(whole.at(-1)).to.equal(entries.reduce((sum, e) => sum + e.amount, opening));
    });
  });

  describe('rendering', () => {
    const period = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-02-01T00:00:00Z') };
    const slice: StatementSlice = {
      opening: 1000n,
      closing: 550n,
      pageStart: 1000n,
      entries: [
        entry(7, -1500n, '2026-01-02T03:04:05.006Z', 'reversal'),
        entry(9, 1050n, '2026-01-03T00:00:00Z', 'transfer'),
      ],
      hasMore: false,
    };

    it('renders JSON numbers whose opening plus entries is the closing balance', () => {
      const body = renderStatement(account, period, slice, 2);
      expect(body.opening_balance).to.equal(10);
      expect(body.entries.map((e) => [e.amount, e.balance])).to.deep.equal([
        [-15, -5],
        [10.5, 5.5],
      ]);
      expect(body.closing_balance).to.equal(5.5);
      expect(body.from).to.equal('2026-01-01T00:00:00.000Z');
    });

    it('renders CSV with a header, the period edges and exact decimal strings', () => {
      const csv = renderStatementCsv(account, period, slice, 2, true);
      expect(csv.split('\r\n')).to.deep.equal([
        'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency,reference,metadata',
        '2026-01-01T00:00:00.000Z,,,opening_balance,,,10.00,USD,,',
        '2026-01-02T03:04:05.006Z,7,00000000-0000-4000-8000-000000000007,reversal,,-15.00,-5.00,USD,,',
        '2026-01-03T00:00:00.000Z,9,00000000-0000-4000-8000-000000000009,transfer,,10.50,5.50,USD,,',
        '2026-02-01T00:00:00.000Z,,,closing_balance,,,5.50,USD,,',
        '',
      ]);
      expect(renderStatementCsv(account, period, slice, 0, true)).to.include(',-1500,-500,USD');
      const own = { reference: 'order, "8812"', metadata: { a: 'b' } };
      const referenced = { ...slice, entries: [{ ...entry(3, 100n, '2026-01-05T00:00:00Z'), own }] };
      // Quoted as RFC 4180 asks: a comma and quotes in the reference, the metadata as one JSON field.
      expect(renderStatementCsv(account, period, referenced, 2, false).split('\r\n')[1]).to.match(
        /,USD,"order, ""8812""","\{""a"":""b""\}"$/,
      );
      expect(renderStatementCsv(account, period, slice, 3, true)).to.include(',-1.500,-0.500,USD');
    });

    it('leaves the opening row to the first page and the closing row to the last', () => {
      const middle = renderStatementCsv(account, period, { ...slice, hasMore: true }, 2, false);
      expect(middle).to.not.include('opening_balance');
      expect(middle).to.not.include('closing_balance');
      expect(middle.split('\r\n')[0]).to.match(/^created_at,/);
    });
  });
});

describe('which end of the journal a statement sums from', () => {
  const opened = new Date('2024-01-01T00:00:00Z');
  it('sums from the opening for a period nearer the opening, back from the balance for one nearer now', () => {
    const early = { from: new Date('2024-02-01T00:00:00Z'), to: new Date('2024-03-01T00:00:00Z') };
    const recent = { from: new Date('2026-11-01T00:00:00Z'), to: NOW };
    expect(sumsFromLatest(early, opened, NOW)).to.equal(false);
    expect(sumsFromLatest(recent, opened, NOW)).to.equal(true);
  });
});
