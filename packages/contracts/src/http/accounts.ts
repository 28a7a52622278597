import { Type } from '@sinclair/typebox';
import { CurrencyCode, Page, PageQuery, Timestamp, Uuid } from './common.js';

/** A currency in a request: checked against the supported set by the service (422 INVALID_CURRENCY), not here. */
export const RequestedCurrency = Type.String({
  minLength: 1,
  maxLength: 16,
  description: '3-letter ISO 4217 code of a supported currency',
});

/** POST /account. */
export const OpenAccountBody = Type.Object({
  currency: RequestedCurrency,
  metadata: Type.Optional(
    Type.Unknown({ description: 'A JSON object of at most 4096 bytes and 5 levels of nesting' }),
  ),
});

export const AccountView = Type.Object(
  {
    id: Uuid,
    user_id: Uuid,
    currency: CurrencyCode,
    balance: Type.Number({ description: 'Booked balance' }),
    available_balance: Type.Number({
      description: 'Balance less the funds held by pending withdrawals and transfers',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AccountPage = Page(AccountView);

/** GET /admin/accounts: one user's accounts, for an operator. */
export const AdminAccountQuery = Type.Object({
  ...PageQuery.properties,
  user_id: Type.String({ format: 'uuid', description: 'The user whose accounts to list' }),
});

export const BalanceView = Type.Object(
  {
    account_id: Uuid,
    balance: Type.Number(),
    currency: CurrencyCode,
    available_balance: Type.Number(),
  },
  { additionalProperties: false },
);

/** POST and GET /payout-account: the connected account at the provider a user's withdrawals are paid out to. */
export const PayoutAccountView = Type.Object(
  {
    provider: Type.String({ description: 'The payment provider (`stripe`)' }),
    account: Type.String({ description: "The user's connected account at the provider (Stripe: `acct_…`)" }),
    onboarding_url: Type.Optional(
      Type.String({
        description:
          "POST and PUT only: where the user completes the provider's onboarding (Stripe: an account link, valid " +
          'for minutes; POST again for a fresh one)',
      }),
    ),
    payouts_enabled: Type.Boolean({
      description:
        'Whether the provider pays out to the account now (Stripe: `payouts_enabled`); a withdrawal while it is ' +
        'false is 422 PAYOUTS_NOT_ENABLED',
    }),
    requirements: Type.Object(
      {
        currently_due: Type.Array(Type.String(), {
          description:
            'What the provider still needs before it pays out (Stripe: `requirements.currently_due`, e.g. ' +
            '`individual.id_number`, `external_account`); complete them at `onboarding_url`',
        }),
        disabled_reason: Type.Union([Type.String(), Type.Null()], {
          description:
            'Why payouts are disabled (Stripe: `requirements.disabled_reason`); null when they are not',
        }),
      },
      { additionalProperties: false },
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

/** PUT /payout-account: replaces the linked account by a new one made at the provider. */
export const ReplacePayoutAccountBody = Type.Object(
  {
    replaces: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'The account linked now (`account` of GET /payout-account). A request repeated after it was replaced ' +
        'answers the new account again and replaces nothing; an account that was never linked is 409 CONFLICT',
    }),
  },
  { additionalProperties: false },
);
