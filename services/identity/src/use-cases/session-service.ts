import { AppError, accessDenied, authRequired, type AuthClaims } from '@payments/service-kit';
import type { IdentityStore } from '../data/identity-store.js';
import type { LoginThrottle } from '../data/login-throttle.js';
import type { PasswordHasher } from '../domain/password-hasher.js';
import type { IssuedToken, TokenIssuer } from '../domain/token-issuer.js';
import { isActive, normalizeEmail, type User, type UserWithCredentials } from '../domain/user.js';
import type { RevocationService } from './revocation-service.js';
import { mustBeActive } from './user-service.js';

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
  sessionMaxSeconds: number;
  now?: () => number;
}

type LoginVerdict = { ok: true; issued: IssuedToken } | { ok: false; refusal: AppError };

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

  const verifyLogin = async (
    user: UserWithCredentials | undefined,
    password: string,
  ): Promise<LoginVerdict> => {
    if (!user) {
      await hasher.verifyDummy(password);
      return { ok: false, refusal: invalidCredentials() };
    }
    const passwordMatches = await hasher.verify(user.passwordHash, password);
    // Decided under the user's row lock, with the token issued there too: a password change or a disable that
    // commits before is seen here, and one that commits after cuts its revocation past this token.
    return store.transaction(async (tx): Promise<LoginVerdict> => {
      const current = await tx.users.lock(user.id, 'share');
      if (!current) return { ok: false, refusal: invalidCredentials() };
      // Decided before the password: a disabled or locked account answers alike for a right and a wrong one,
      // and counts as a failure either way (a slot handed back would tell a right guess).
      if (!isActive(current)) return { ok: false, refusal: notActive(current) };
      if (!passwordMatches || current.passwordHash !== user.passwordHash) {
        return { ok: false, refusal: invalidCredentials() };
      }
      const issued = deps.issuer.issue(current, { now: current.lockedAt });
      if (!issued) throw sessionOver();
      return { ok: true, issued };
    });
  };

  return {
    async login({ name, password, clientAddress }) {
      const user = await findUser(name);
      // A user's username and e-mail share one counter; unknown names are counted too, so both look alike.
      const identityKey = user ? `user:${user.id}` : `name:${name.value.trim().toLowerCase()}`;
      const checked = await throttle.check(identityKey, clientAddress, () => verifyLogin(user, password));
      if (!checked.allowed) {
        throw new AppError('RATE_LIMIT_EXCEEDED', 'Too many login attempts; try again later', undefined, {
          'Retry-After': String(checked.retryAfterSeconds),
        });
      }
      if (!checked.verdict.ok) throw checked.verdict.refusal;
      return checked.verdict.issued;
    },

    async refresh(claims, correlationId) {
      const retired = revocations.oneToken(claims.jti, claims.expiresAt);
      const issued = await store.transaction(async (tx) => {
        // The user's row lock orders this refresh with every password change, disable and deletion of the user
        // (they take it to cut their revocations): one committed before is found below, one after covers the
        // token issued here, whose iat is no later than the database's clock now.
        const user = mustBeActive(await tx.users.lock(claims.userId, 'share'));
        if (now() >= claims.authTime + deps.sessionMaxSeconds) throw sessionOver();
        // The token was checked against this process's revocation list, which may not have them yet.
        if (claims.issuedAt < user.tokensValidFrom && (await tx.revocations.coversToken(claims))) {
          throw authRequired('This session was revoked');
        }
        if (!(await revocations.record(tx, retired, correlationId))) {
          throw authRequired('This token was refreshed or logged out already');
        }
        const fresh = deps.issuer.issue(user, { now: user.lockedAt, authTime: claims.authTime });
        if (!fresh) throw sessionOver();
        return fresh;
      });
      revocations.committed(retired);
      return issued;
    },

    async logout(claims, correlationId) {
      await revocations.revoke(revocations.oneToken(claims.jti, claims.expiresAt), correlationId);
    },
  };
}
