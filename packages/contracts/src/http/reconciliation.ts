import { Type } from '@sinclair/typebox';
import { AccountView } from './accounts.js';
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

/**
 * GET /admin/overdrawn-accounts: an account a refund or lost dispute took below zero (the provider took back money
 * the user had already moved on). Nothing can be withdrawn or transferred from it until deposits make it up.
 */
export const OverdrawnAccountView = Type.Object(
  {
    ...AccountView.properties,
    overdrawn_by: Type.Number({ description: 'How far the available balance is below zero' }),
  },
  { additionalProperties: false },
);

export const OverdrawnAccountPage = Page(OverdrawnAccountView);
