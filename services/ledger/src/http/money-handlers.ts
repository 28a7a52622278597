import type { Request, RequestHandler } from 'express';
import { DepositBody, MoneyBody, TransferBody } from '@payments/contracts';
import { apiVersionOf, bodyValidator } from '@payments/service-kit';
import { readIdempotencyKey } from '../domain/idempotency.js';
import { exponentsFor } from '../use-cases/currencies.js';
import type { AcceptedRequest, MoneyRequest } from '../use-cases/money-requests.js';
import { correlationIdOf, pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderTransaction } from './presenters.js';

const readDeposit = bodyValidator(DepositBody);
const readMoney = bodyValidator(MoneyBody);
const readTransfer = bodyValidator(TransferBody);

/** A money request's parts common to every operation, read from the path, the body, the token and the headers. */
function moneyRequestOf<
  B extends { amount: unknown; currency: string; metadata?: Record<string, string>; reference?: string },
>(req: Request, readBody: (req: Request) => B): { request: MoneyRequest; body: B } {
  const accountId = pathId(req, 'Account');
  const body = readBody(req);
  const viewer = viewerOf(req);
  const request = {
    userId: viewer.userId,
    accountId,
    amount: body.amount,
    currency: body.currency,
    metadata: body.metadata ?? {},
    reference: body.reference ?? null,
    idempotencyKey: readIdempotencyKey(req.get('idempotency-key')),
    body: req.body as unknown,
    correlationId: correlationIdOf(req),
    log: req.log,
  };
  return { request, body };
}

/** The money routes (ledger-routes.ts): 202 with the transaction, or the replay of the first answer. */
export function createMoneyHandlers({
  moneyRequests,
  currencies,
}: LedgerHttpDeps): Record<'deposit' | 'withdraw' | 'transfer', RequestHandler> {
  const answer =
    (accept: (req: Request) => Promise<AcceptedRequest>): RequestHandler =>
    async (req, res) => {
      const { transaction, replayed } = await accept(req);
      const exponents = await exponentsFor(
        currencies,
        [transaction.currency, transaction.convertedCurrency].filter((code): code is string => code !== null),
      );
      res.status(202).location(`/transaction/${transaction.id}`);
      if (replayed) res.set('Idempotent-Replayed', 'true');
      // The requester's own: a replay answers the same user (the claims are per user).
      res.json(renderTransaction(transaction, exponents, apiVersionOf(req), true));
    };
  return {
    deposit: answer((req) => {
      const { request, body } = moneyRequestOf(req, readDeposit);
      return moneyRequests.deposit({ ...request, paymentMethod: body.payment_method ?? null });
    }),
    withdraw: answer((req) => moneyRequests.withdraw(moneyRequestOf(req, readMoney).request)),
    transfer: answer((req) => {
      const { request, body } = moneyRequestOf(req, readTransfer);
      return moneyRequests.transfer({ ...request, toAccountId: body.to_account_id });
    }),
  };
}
