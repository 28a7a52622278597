import { AppError, accessDenied, authRequired, type AuthClaims } from '@payments/service-kit';
import type { IdentityStore } from '../data/identity-store.js';
import type { LoginThrottle } from '../data/login-throttle.js';
import type { PasswordHasher } from '../domain/password-hasher.js';
import type { IssuedToken, TokenIssuer } from '../domain/token-issuer.js';
import { isActive, normalizeEmail, type User, type UserWithCredentials } from '../domain/user.js';
import type { RevocationService } from './revocation-service.js';
import type { UserService } from './user-service.js';

/** How the user named themselves: `identity` holds either a username or an e-mail address. */
export type LoginName = { kind: 'username' | 'email' | 'identity'; value: string };

export interface LoginAttempt {
  name: LoginName;
  password: string;
  clientAddress: string;
}

export interface SessionService {
  login(attempt: LoginAttempt): Promise<IssuedToken>;
  /**
   * A fresh token for a valid one, which is revoked so a token cannot multiply: of concurrent refreshes of one
   * token exactly one succeeds. The session (`auth_time`) carries on and ends SESSION_MAX_SECONDS after its login.
   */
  refresh(claims: AuthClaims, correlationId: string): Promise<IssuedToken>;
  logout(claims: AuthClaims, correlationId: string): Promise<void>;
}

export interface SessionServiceDeps {
  store: IdentityStore;
  hasher: PasswordHasher;
  issuer: TokenIssuer;
  throttle: LoginThrottle;
  revocations: RevocationService;
  users: Pick<UserService, 'activeActor'>;
  sessionMaxSeconds: number;
  now?: () => number;
}

const invalidCredentials = () =>
  new AppError('INVALID_CREDENTIALS', 'The username, e-mail or password is not correct');

const sessionOver = () => authRequired('This session has reached its maximum length; log in again');

// The same answer whatever the password, so a disabled account is no oracle for its password.
const notActive = (user: User) => accessDenied(`This account is ${user.status}`);

function isEmailName({ kind, value }: LoginName): boolean {
  return kind === 'email' || (kind === 'identity' && value.includes('@'));
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const { store, hasher, throttle, revocations } = deps;
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));

  const findUser = (name: LoginName): Promise<UserWithCredentials | undefined> =>
    isEmailName(name)
      ? store.users.findByEmail(normalizeEmail(name.value))
      : store.users.findByUsername(name.value);

  return {
    async login({ name, password, clientAddress }) {
      const user = await findUser(name);
      // A user's username and e-mail share one counter; unknown names are counted too, so both look alike.
      const identityKey = user ? `user:${user.id}` : `name:${name.value.trim().toLowerCase()}`;
      const decision = await throttle.attempt(identityKey, clientAddress);
      if (!decision.allowed) {
        throw new AppError(
          'RATE_LIMIT_EXCEEDED',
          'Too many failed login attempts; try again later',
          undefined,
          { 'Retry-After': String(decision.retryAfterSeconds) },
        );
      }
      if (!user) {
        await hasher.verifyDummy(password);
        throw invalidCredentials();
      }
      const passwordMatches = await hasher.verify(user.passwordHash, password);
      // Read again: the password or the status may have changed while we were hashing.
      const current = await store.users.findById(user.id);
      if (!current) throw invalidCredentials();
      // Decided before the password: a disabled or locked account answers alike for a right and a wrong one,
      // and its attempts are never handed back (which would tell a right guess too).
      if (!isActive(current)) throw notActive(current);
      // A token must not outlive a password change made while we were hashing.
      if (!passwordMatches || current.passwordHash !== user.passwordHash) throw invalidCredentials();
      await throttle.succeeded(identityKey, clientAddress);
      const issued = deps.issuer.issue(current);
      if (!issued) throw sessionOver();
      return issued;
    },

    async refresh(claims, correlationId) {
      const user = await deps.users.activeActor(claims);
      if (now() >= claims.authTime + deps.sessionMaxSeconds) throw sessionOver();
      const revoked = await revocations.revoke(
        revocations.oneToken(claims.jti, claims.expiresAt),
        correlationId,
      );
      if (!revoked) throw authRequired('This token was refreshed or logged out already');
      const issued = deps.issuer.issue(user, claims.authTime);
      if (!issued) throw sessionOver();
      return issued;
    },

    async logout(claims, correlationId) {
      await revocations.revoke(revocations.oneToken(claims.jti, claims.expiresAt), correlationId);
    },
  };
}
