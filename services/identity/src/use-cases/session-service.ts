import { AppError, accessDenied, type AuthClaims } from '@payments/service-kit';
import type { IdentityStore } from '../data/identity-store.js';
import type { LoginThrottle } from '../data/login-throttle.js';
import type { PasswordHasher } from '../domain/password-hasher.js';
import type { IssuedToken, TokenIssuer } from '../domain/token-issuer.js';
import { isActive, normalizeEmail, type UserWithCredentials } from '../domain/user.js';
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
  /** A fresh token for a valid one, which is revoked so a token cannot multiply. */
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
}

const invalidCredentials = () =>
  new AppError('INVALID_CREDENTIALS', 'The username, e-mail or password is not correct');

function isEmailName({ kind, value }: LoginName): boolean {
  return kind === 'email' || (kind === 'identity' && value.includes('@'));
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const { store, hasher, throttle, revocations } = deps;

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
      if (!(await hasher.verify(user.passwordHash, password))) throw invalidCredentials();
      // The password may have changed while we were hashing; a token must not outlive that change.
      const current = await store.users.findById(user.id);
      if (!current || current.passwordHash !== user.passwordHash) throw invalidCredentials();
      await throttle.succeeded(identityKey, clientAddress);
      if (!isActive(current)) throw accessDenied(`This account is ${current.status}`);
      return deps.issuer.issue(current);
    },

    async refresh(claims, correlationId) {
      const user = await deps.users.activeActor(claims);
      await revocations.revoke(revocations.oneToken(claims.jti, claims.expiresAt), correlationId);
      return deps.issuer.issue(user);
    },

    async logout(claims, correlationId) {
      await revocations.revoke(revocations.oneToken(claims.jti, claims.expiresAt), correlationId);
    },
  };
}
