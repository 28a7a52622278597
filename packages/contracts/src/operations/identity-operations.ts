import { JSON_BODY, PROTECTED, type Operation } from './operation.js';

/** A login, under either of its paths. */
const LOGIN = {
  method: 'post',
  owner: 'identity',
  access: 'public',
  tag: 'Authentication',
  body: 'Login',
  success: { status: 200, description: 'A bearer token', schema: 'Token', headers: ['CacheControl'] },
  errors: [...JSON_BODY, 401, 403],
} satisfies Partial<Operation>;

/** Identity: logins and tokens, their keys, users, and the admins' view of users. */
export const IDENTITY_OPERATIONS = {
  login: {
    ...LOGIN,
    path: '/auth/login',
    summary: 'Log in',
    description:
      'Give the password and exactly one of `username`, `email` or `identity`. Repeated failures for one identity ' +
      'or from one address are refused with 429 for a while.',
  },
  loginAlias: { ...LOGIN, path: '/login', summary: 'Log in (same as POST /auth/login)' },
  refreshToken: {
    method: 'post',
    path: '/auth/refresh',
    owner: 'identity',
    access: 'user-at-service',
    tag: 'Authentication',
    summary: 'Exchange a valid token for a fresh one',
    description:
      'Once per token: of concurrent refreshes of one token one succeeds, the others get 401. The new token keeps ' +
      "the session's login time (`auth_time`); a session ends `SESSION_MAX_SECONDS` (12 h) after its login.",
    success: { status: 200, description: 'A new bearer token', schema: 'Token', headers: ['CacheControl'] },
    errors: PROTECTED,
  },
  logout: {
    method: 'post',
    path: '/auth/logout',
    owner: 'identity',
    access: 'user',
    tag: 'Authentication',
    summary: 'Revoke the token used for this call, everywhere',
    success: { status: 204, description: 'Revoked' },
    errors: PROTECTED,
  },
  getSigningKeys: {
    method: 'get',
    path: '/.well-known/jwks.json',
    owner: 'identity',
    access: 'public',
    tag: 'Authentication',
    summary: 'The public keys tokens are verified with (JWKS)',
    success: { status: 200, description: 'A JSON Web Key Set', schema: 'Jwks', headers: ['CacheControl'] },
    errors: [],
  },
  registerUser: {
    method: 'post',
    path: '/user',
    owner: 'identity',
    access: 'public',
    tag: 'Users',
    summary: 'Register',
    description: 'Registrations from one client address are limited (429 with `Retry-After`).',
    body: 'NewUser',
    success: {
      status: 201,
      description: 'The user, without sensitive fields',
      schema: 'User',
      headers: ['Location', 'ETag'],
    },
    errors: [...JSON_BODY, 409],
  },
  getUser: {
    method: 'get',
    path: '/user/{id}',
    owner: 'identity',
    access: 'user',
    tag: 'Users',
    summary: 'Read a user (yourself, or anyone as an admin)',
    success: { status: 200, description: 'The user', schema: 'User', headers: ['ETag'] },
    errors: [...PROTECTED, 404],
  },
  updateUser: {
    method: 'put',
    path: '/user/{id}',
    owner: 'identity',
    access: 'user',
    tag: 'Users',
    summary: 'Change username, e-mail or password (partial update)',
    description:
      'Other fields are refused with 400. With `If-Match`, a stale version gives 409. A new e-mail or password ' +
      "needs the caller's `current_password` (missing: 422, wrong: 403, counted as a failed login); a password " +
      'changed by a concurrent request meanwhile gives 409. A new password revokes every other token issued ' +
      'before it.',
    headers: ['IfMatch'],
    body: 'UserUpdate',
    success: { status: 200, description: 'The updated user', schema: 'User', headers: ['ETag'] },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
  deleteUser: {
    method: 'delete',
    path: '/user/{id}',
    owner: 'identity',
    access: 'user',
    tag: 'Users',
    summary: 'Delete a user with their accounts and transactions',
    description:
      'Needs `?confirm=true` or a body of `{ "confirm": true }`. A user with a non-zero balance, a pending ' +
      'transaction or a pending transfer on its way in cannot be deleted (422); the ledger decides this ' +
      'atomically against every money movement. An admin deleting another user may say why (`reason`); the ' +
      'deletion lands in the trail of admin actions (GET /admin/actions).',
    extraQuery: [
      {
        name: 'confirm',
        description: 'Must be `true` unless the body confirms',
        schema: { type: 'string', enum: ['true'] },
      },
    ],
    body: 'UserDeletion',
    bodyOptional: true,
    success: { status: 204, description: 'Deleted' },
    errors: [...JSON_BODY, ...PROTECTED, 404, 422],
  },
  setUserStatus: {
    method: 'patch',
    path: '/admin/users/{id}/status',
    owner: 'identity',
    access: 'user',
    tag: 'Administration',
    summary: 'Activate, disable or lock a user (admins only)',
    description:
      'Disabling or locking revokes the user’s tokens. Each change lands in the trail of admin actions (GET ' +
      '/admin/actions) with its optional `reason`, in the same transaction: a change the trail cannot take is ' +
      'not made.',
    body: 'StatusChange',
    success: { status: 200, description: 'The user', schema: 'User', headers: ['ETag'] },
    errors: [...JSON_BODY, ...PROTECTED, 404, 422],
  },
  findUsers: {
    method: 'get',
    path: '/admin/users',
    owner: 'identity',
    access: 'user',
    tag: 'Administration',
    summary: 'Find users by username, e-mail, the start of either, or status (admins only)',
    description:
      '`username` and `email` match exactly, in any case; `q` matches the start of a username or an e-mail ' +
      'address, in any case; `status` keeps one status. Criteria combine (all must hold); without any, every ' +
      'user. Ordered by username.',
    query: 'UserSearchQuery',
    success: { status: 200, description: 'A page of users', schema: 'UserPage' },
    errors: [400, ...PROTECTED],
  },
  createApiKey: {
    method: 'post',
    path: '/api-keys',
    owner: 'identity',
    access: 'user',
    tag: 'API keys',
    summary: 'Create an API key; its secret is shown once',
    description:
      'Without `scopes`, a secret key (`sk_live_…` / `sk_test_…`) with all your powers; with them, a restricted ' +
      'key (`rk_…`) that may do only that, anything else answered 403. Only admins may give `admin_read` or ' +
      '`admin_write` (403). Keys are made with your password-backed session or a secret key: a restricted key ' +
      'manages no keys (403). The secret is stored only as a hash. Lands in the trail of actions.',
    body: 'NewApiKey',
    success: {
      status: 201,
      description: 'The key, with its secret (never shown again)',
      schema: 'ApiKeyWithSecret',
      headers: ['Location', 'CacheControl'],
    },
    errors: [...JSON_BODY, ...PROTECTED],
  },
  listApiKeys: {
    method: 'get',
    path: '/api-keys',
    owner: 'identity',
    access: 'user',
    tag: 'API keys',
    summary: 'Your API keys that are not revoked, newest first (never their secrets)',
    query: 'PageQuery',
    success: { status: 200, description: 'A page of keys', schema: 'ApiKeyPage' },
    errors: [400, ...PROTECTED],
  },
  revokeApiKey: {
    method: 'delete',
    path: '/api-keys/{id}',
    owner: 'identity',
    access: 'user',
    tag: 'API keys',
    summary: 'Revoke an API key, everywhere and at once',
    description:
      'Another user’s key, or one already revoked, is 404. Lands in the trail of actions. A password change ' +
      'revokes no key; deleting the user revokes them all.',
    success: { status: 204, description: 'Revoked' },
    errors: [...PROTECTED, 404],
  },
} satisfies Record<string, Operation>;
