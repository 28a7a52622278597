import type { RequestHandler } from 'express';
import { BalanceQuery, StatementQuery } from '@payments/contracts';
import { queryValidator } from '@payments/service-kit';
import { readBalanceMoment, readStatementPeriod } from '../domain/statement.js';
import { currencyUnitOf } from '../use-cases/currencies.js';
import { pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderBalance, renderPastBalance, renderStatement, renderStatementCsv } from './presenters.js';

const readStatementQuery = queryValidator(StatementQuery);
const readBalanceQuery = queryValidator(BalanceQuery);

export function createStatementHandlers({
  statements,
  currencies,
}: LedgerHttpDeps): Record<'showStatement' | 'showBalance', RequestHandler> {
  /** Opening and closing balance of a period and a page of its entries with the running balance, JSON or CSV. */
  const showStatement: RequestHandler = async (req, res) => {
    const query = readStatementQuery(req);
    const period = readStatementPeriod(query.from, query.to, new Date());
    const { account, slice } = await statements.statement({
      accountId: pathId(req, 'Account'),
      viewer: viewerOf(req),
      period,
      page: { startingAfter: query.starting_after, limit: query.limit },
    });
    const { exponent } = await currencyUnitOf(currencies, account.currency);
    res.set('Cache-Control', 'no-store');
    if (query.format === 'json') return void res.json(renderStatement(account, period, slice, exponent));

    const last = slice.entries.at(-1);
    if (slice.hasMore && last) {
      // Relative to the request, so it keeps whatever version prefix the client used.
      const next = new URLSearchParams({
        from: period.from.toISOString(),
        to: period.to.toISOString(),
        limit: String(query.limit),
        starting_after: last.id,
        format: 'csv',
      });
      res.set('Link', `<?${next.toString()}>; rel="next"`);
    }
    const day = (moment: Date) => moment.toISOString().slice(0, 10);
    res
      .type('text/csv; charset=utf-8')
      .set(
        'Content-Disposition',
        `attachment; filename="statement-${account.id}-${day(period.from)}-${day(period.to)}.csv"`,
      )
      .send(renderStatementCsv(account, period, slice, exponent, query.starting_after === undefined));
  };

  /** The balance now (booked and available), or with `at` the booked balance at a past moment. */
  const showBalance: RequestHandler = async (req, res) => {
    const { at } = readBalanceQuery(req);
    const moment = at === undefined ? null : readBalanceMoment(at, new Date());
    const { account, balanceAt } = await statements.balance({
      accountId: pathId(req, 'Account'),
      viewer: viewerOf(req),
      at: moment,
    });
    const { exponent } = await currencyUnitOf(currencies, account.currency);
    if (!moment || balanceAt === null) return void res.json(renderBalance(account, exponent));
    res.json(renderPastBalance(account, balanceAt, moment, exponent));
  };

  return { showStatement, showBalance };
}
