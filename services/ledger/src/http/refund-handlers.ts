import type { RequestHandler } from 'express';
import { RefundBody } from '@payments/contracts';
import { apiVersionOf, bodyValidator } from '@payments/service-kit';
import { readIdempotencyKey } from '../domain/idempotency.js';
import { seesOwnFields } from '../domain/transaction.js';
import { exponentsFor } from '../use-cases/currencies.js';
import { correlationIdOf, pathId, viewerOf } from './access.js';
import type { LedgerHttpDeps } from './ledger-http-deps.js';
import { renderTransaction } from './presenters.js';

const readRefund = bodyValidator(RefundBody);

/** POST /transaction/{id}/refund: 202 with the refund (a reversal of the deposit), or the replay of the first. */
export function createRefundHandlers({ refunds, currencies }: LedgerHttpDeps): { refund: RequestHandler } {
  return {
    async refund(req, res) {
      const depositId = pathId(req, 'Transaction');
      // No body at all is a full refund with no reason, as `{}` is.
      if (req.body === undefined) req.body = {};
      const body = readRefund(req);
      const viewer = viewerOf(req);
      const { transaction, replayed } = await refunds.request({
        depositId,
        viewer,
        amount: body.amount,
        reason: body.reason ?? null,
        idempotencyKey: readIdempotencyKey(req.get('idempotency-key')),
        body: req.body as unknown,
        correlationId: correlationIdOf(req),
        log: req.log,
      });
      const exponents = await exponentsFor(currencies, [transaction.currency]);
      res.status(202).location(`/transaction/${transaction.id}`);
      if (replayed) res.set('Idempotent-Replayed', 'true');
      // The refund is the deposit owner's: an admin sees it as admins see any transaction. A replay's reason is
      // the first request's: a key reused with another body is a 409.
      res.json(
        renderTransaction(
          { ...transaction, refundReason: body.reason ?? null },
          exponents,
          apiVersionOf(req),
          seesOwnFields(transaction, viewer),
        ),
      );
    },
  };
}
