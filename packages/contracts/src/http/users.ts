import { Type } from '@sinclair/typebox';
import { USER_ROLES, USER_STATUSES } from '../enums.js';
import { AdminReason, Page, PageQuery, Timestamp, Uuid } from './common.js';

export const USERNAME_PATTERN = '^[A-Za-z0-9_.-]+$';

export const Username = Type.String({
  minLength: 3,
  maxLength: 32,
  pattern: USERNAME_PATTERN,
  description: '3–32 letters, digits, "_", "." or "-"',
});

export const Email = Type.String({ format: 'email', maxLength: 254 });

/** OWASP: at least 8 characters, and a maximum so a huge password cannot tie up the hasher. */
export const Password = Type.String({ minLength: 8, maxLength: 128 });

/** POST /user. */
export const NewUserBody = Type.Object(
  { username: Username, email: Email, password: Password },
  { additionalProperties: false },
);

/** PUT /user/{id}: a partial update; read-only fields are refused. */
export const UserUpdateBody = Type.Object(
  {
    username: Type.Optional(Username),
    email: Type.Optional(Email),
    password: Type.Optional(Password),
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: "The caller's current password: required to change the e-mail or the password",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const LoginName = Type.String({ minLength: 1, maxLength: 254 });

/** POST /auth/login and /login: the password and exactly one of username, email or identity. */
export const LoginBody = Type.Object(
  {
    username: Type.Optional(LoginName),
    email: Type.Optional(LoginName),
    identity: Type.Optional(
      Type.String({ minLength: 1, maxLength: 254, description: 'A username or an e-mail address' }),
    ),
    // Longer than any password we accept, so a long guess is a 401 like any other, yet bounded.
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const UserStatus = Type.Union(USER_STATUSES.map((status) => Type.Literal(status)));

/** PATCH /admin/users/{id}/status. */
export const StatusChangeBody = Type.Object(
  { status: UserStatus, reason: Type.Optional(AdminReason) },
  { additionalProperties: false },
);

/** DELETE /user/{id}: the confirmation (or `?confirm=true`), and an admin's reason for deleting someone else. */
export const UserDeletionBody = Type.Object(
  { confirm: Type.Optional(Type.Boolean()), reason: Type.Optional(AdminReason) },
  { additionalProperties: false },
);

/** A user as the API answers it: never a password or its hash. */
export const UserView = Type.Object(
  {
    id: Uuid,
    username: Type.String(),
    email: Type.String(),
    role: Type.Union(USER_ROLES.map((role) => Type.Literal(role))),
    status: UserStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const UserPage = Page(UserView);

/**
 * GET /admin/users: exact `username` (any case) and `email` (compared in lower case, as stored), `q`, the
 * start of a username or an e-mail address, and `id_prefix`, the start of an id; every criterion given must hold.
 */
export const UserSearchQuery = Type.Object({
  ...PageQuery.properties,
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'A username, any case' })),
  email: Type.Optional(
    Type.String({ minLength: 1, maxLength: 254, description: 'An e-mail address, any case' }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'The start of a username or e-mail address, any case (`%` and `_` are plain characters)',
    }),
  ),
  id_prefix: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 36,
      pattern: '^[0-9a-fA-F-]+$',
      description: "The start of a user's id (as shown, shortened, in logs and the console), any case",
    }),
  ),
  status: Type.Optional(UserStatus),
});

export const TokenView = Type.Object(
  {
    token: Type.String({ description: 'A JWT (ES256) to send as `Authorization: Bearer <token>`' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 1, description: 'Lifetime of the token in seconds' }),
  },
  { additionalProperties: false },
);
