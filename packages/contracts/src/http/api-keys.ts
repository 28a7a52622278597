import { Type } from '@sinclair/typebox';
import { API_KEY_SCOPES } from '../enums.js';
import { Nullable, Page, Timestamp, Uuid } from './common.js';

const Scope = Type.Union(
  API_KEY_SCOPES.map((scope) => Type.Literal(scope)),
  {
    description:
      '`read` (every read of your own resources), `money` (accounts and money operations), `webhook_endpoints` ' +
      '(changing outgoing webhook endpoints), and for admins `admin_read` / `admin_write`',
  },
);

/** POST /api-keys. */
export const NewApiKeyBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'What the key is for, e.g. "billing server"',
    }),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the key stops working (in the future, at most 10 years ahead); none: never',
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Scope, {
        minItems: 1,
        maxItems: API_KEY_SCOPES.length,
        uniqueItems: true,
        description:
          'A restricted key (`rk_…`) with only these powers; none: a secret key (`sk_…`) with all yours',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ApiKeyView = Type.Object(
  {
    id: Uuid,
    object: Type.Literal('api_key'),
    user_id: Uuid,
    name: Type.String(),
    type: Type.Union([Type.Literal('secret'), Type.Literal('restricted')], {
      description: '`secret`: all the user’s powers; `restricted`: only `scopes`',
    }),
    livemode: Type.Boolean({ description: 'A key of a live (production) deployment, else a test one' }),
    prefix: Type.String({ description: 'How the key starts, e.g. `rk_live_`' }),
    last4: Type.String({ description: 'The last four characters of the secret, to tell keys apart' }),
    scopes: Nullable(Type.Array(Scope)),
    expires_at: Nullable(Timestamp),
    last_used_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

/** The answer to POST /api-keys: the only time the secret is ever shown. */
export const ApiKeyWithSecretView = Type.Object(
  {
    ...ApiKeyView.properties,
    secret: Type.String({
      description: 'The key itself, shown this once: send it as `Authorization: Bearer <secret>`',
    }),
  },
  { additionalProperties: false },
);

export const ApiKeyPage = Page(ApiKeyView);

/** Identity's internal exchange (the gateway's only): a key for a short-lived token carrying its powers. */
export const ApiKeyExchangeBody = Type.Object(
  { secret: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
