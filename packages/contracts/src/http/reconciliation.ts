import { Type } from '@sinclair/typebox';
import { Page, Timestamp, Uuid } from './common.js';
import { TransactionView } from './money.js';

/**
 * GET /admin/reconciliation: a withdrawal the provider may have received that got no confirmation before its
 * hold expired. It stays pending with its hold until the provider's late answer (or an operator) settles it.
 */
export const ReconciliationView = Type.Object(
  {
    ...TransactionView.properties,
    user_id: Uuid,
    reconciliation_required_at: Timestamp,
  },
  { additionalProperties: false },
);

export const ReconciliationPage = Page(ReconciliationView);
