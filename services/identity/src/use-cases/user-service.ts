import { randomUUID } from 'node:crypto';
import {
  AppError,
  ConfigError,
  accessDenied,
  adminActionTakenEvent,
  authRequired,
  notFound,
  type AuthClaims,
  type Logger,
  type Page,
  type PageRequest,
} from '@payments/service-kit';
import type { IdentityStore } from '../data/identity-store.js';
import type { LedgerClient } from '../data/ledger-client.js';
import type { LoginThrottle } from '../data/login-throttle.js';
import type { RegistrationThrottle } from '../data/registration-throttle.js';
import type { UniqueField, UpdateResult, UserSearch } from '../data/user-repository.js';
import { credentialProblems } from '../domain/credential-rules.js';
import type { PasswordHasher } from '../domain/password-hasher.js';
import {
  canChange,
  canDelete,
  canRead,
  nextTokensValidFrom,
  normalizeEmail,
  type User,
  type UserStatus,
} from '../domain/user.js';
import { userDeletedEvent, userUpdatedEvent } from '../events/identity-events.js';
import type { RevocationService } from './revocation-service.js';

export interface Registration {
  username: string;
  email: string;
  password: string;
}

export interface UserUpdate {
  username?: string;
  email?: string;
  password?: string;
  /** The caller's own password, required to change the e-mail or the password. */
  currentPassword?: string;
}

/** What an admin says about an action on someone else, kept in the trail of admin actions. */
export interface AdminIntent {
  /** Optional: null when the admin gave none. */
  reason: string | null;
  correlationId: string;
}

export interface UpdateOptions {
  /** From If-Match; undefined means no precondition. */
  expectedVersions: number[] | undefined;
  correlationId: string;
  /** Wrong current passwords count against the failed-login limit of this address too. */
  clientAddress: string;
}

export interface UserService {
  /** Limited per client address: each registration costs an argon2 hash. */
  register(registration: Registration, clientAddress: string): Promise<User>;
  /** The user a token speaks for, who must still exist (else 401) and be active (else 403). */
  activeActor(claims: AuthClaims): Promise<User>;
  get(claims: AuthClaims, id: string): Promise<User>;
  /** For other services (internal API): any user, or null. */
  find(id: string): Promise<User | null>;
  /**
   * Changing the e-mail or the password needs the caller's current password (a stolen token alone must not take
   * the account over); a wrong one is 403 and counts as a failed login.
   */
  update(claims: AuthClaims, id: string, changes: UserUpdate, options: UpdateOptions): Promise<User>;
  /** An admin's deletion of another user lands in the trail of admin actions, in the deletion's transaction. */
  remove(claims: AuthClaims, id: string, intent: AdminIntent): Promise<void>;
  /** Lands in the trail of admin actions in the same transaction: recorded, or not done at all. */
  setStatus(claims: AuthClaims, id: string, status: UserStatus, intent: AdminIntent): Promise<User>;
  /** For an admin: the users matching every criterion given, a page of them. */
  findUsers(claims: AuthClaims, criteria: UserSearch, page: PageRequest): Promise<Page<User>>;
  /** Creates the configured administrator unless a user with that name or e-mail exists. */
  ensureAdmin(admin: Registration): Promise<void>;
}

export interface UserServiceDeps {
  store: IdentityStore;
  hasher: PasswordHasher;
  revocations: RevocationService;
  ledger: LedgerClient;
  loginThrottle: LoginThrottle;
  registrationThrottle: RegistrationThrottle;
  logger: Logger;
}

const duplicate = (field: UniqueField) =>
  new AppError('DUPLICATE_ENTRY', `A user with this ${field} already exists`, [
    { field, message: 'is already taken' },
  ]);

const tooMany = (what: string, decision: { retryAfterSeconds: number }) =>
  new AppError('RATE_LIMIT_EXCEEDED', `Too many ${what}; try again later`, undefined, {
    'Retry-After': String(decision.retryAfterSeconds),
  });

/** The user a token speaks for must still exist (else 401) and be active (else 403). */
export function mustBeActive<T extends User>(user: T | undefined): T {
  if (!user) throw authRequired('The user of this token no longer exists');
  if (user.status !== 'active') throw accessDenied(`This account is ${user.status}`);
  return user;
}

function unwrap(result: UpdateResult): User {
  if (result.ok) return result.user;
  if (result.reason === 'duplicate') throw duplicate(result.field);
  if (result.reason === 'stale') {
    throw new AppError(
      'CONFLICT',
      'The user has changed since it was read (If-Match does not match the current ETag); read it again',
    );
  }
  throw notFound('User');
}

export function createUserService(deps: UserServiceDeps): UserService {
  const { store, hasher, revocations } = deps;

  /** The password hash the current password was checked against. */
  const confirmCurrentPassword = async (
    actorId: string,
    currentPassword: string | undefined,
    clientAddress: string,
  ): Promise<string> => {
    if (currentPassword === undefined) {
      throw new AppError(
        'BUSINESS_RULE_VIOLATION',
        'Changing the e-mail or the password needs your current password in current_password',
        [{ field: 'current_password', message: 'is required to change the e-mail or the password' }],
      );
    }
    // Counted like a login, so a stolen token is no way round the limit on guessing the password.
    const checked = await deps.loginThrottle.check(`user:${actorId}`, clientAddress, async () => {
      const actor = await store.users.findById(actorId);
      return actor && (await hasher.verify(actor.passwordHash, currentPassword))
        ? { ok: true as const, passwordHash: actor.passwordHash }
        : { ok: false as const };
    });
    if (!checked.allowed) throw tooMany('failed password attempts', checked);
    if (!checked.verdict.ok) throw accessDenied('The current password is not correct');
    return checked.verdict.passwordHash;
  };

  const service: UserService = {
    async register({ username, email, password }, clientAddress) {
      const decision = await deps.registrationThrottle.attempt(clientAddress);
      if (!decision.allowed) throw tooMany('registrations from this address', decision);
      const passwordHash = await hasher.hash(password);
      const result = await store.users.insert({
        id: randomUUID(),
        username,
        email: normalizeEmail(email),
        passwordHash,
        role: 'user',
      });
      if (!result.ok) throw duplicate(result.duplicate);
      return result.user;
    },

    async activeActor(claims) {
      return mustBeActive(await store.users.findById(claims.userId));
    },

    async get(claims, id) {
      const actor = await service.activeActor(claims);
      if (!canRead(actor, id)) throw accessDenied();
      const user = await store.users.findById(id);
      if (!user) throw notFound('User');
      return user;
    },

    async find(id) {
      return (await store.users.findById(id)) ?? null;
    },

    async update(claims, id, changes, { expectedVersions, correlationId, clientAddress }) {
      const actor = await service.activeActor(claims);
      if (!canChange(actor, id)) throw accessDenied();
      const provenHash =
        changes.email !== undefined || changes.password !== undefined
          ? await confirmCurrentPassword(actor.id, changes.currentPassword, clientAddress)
          : undefined;
      const passwordHash = changes.password === undefined ? undefined : await hasher.hash(changes.password);
      // Changing one's own password logs out every other session, not this one.
      const keep = claims.userId === id ? claims.jti : undefined;
      const { user, revocation } = await store.transaction(async (tx) => {
        // Hashing is done; from here the row is locked, so a disable, a deletion or another change either
        // committed before (and is seen here) or waits until this one commits.
        const locked = mustBeActive(await tx.users.lock(id, 'update'));
        if (provenHash !== undefined && locked.passwordHash !== provenHash) {
          throw new AppError(
            'CONFLICT',
            'The password was changed while this change was made; give the current password again',
          );
        }
        const revocation =
          passwordHash === undefined
            ? undefined
            : revocations.allTokensOf(id, nextTokensValidFrom(locked, locked.lockedAt), keep);
        const result = await tx.users.update(
          id,
          {
            username: changes.username,
            email: changes.email === undefined ? undefined : normalizeEmail(changes.email),
            passwordHash,
            tokensValidFrom: revocation?.issued_before,
          },
          expectedVersions,
        );
        const updated = unwrap(result);
        if (revocation) await revocations.record(tx, revocation, correlationId);
        await tx.enqueueEvents([userUpdatedEvent(updated, correlationId)]);
        return { user: updated, revocation };
      });
      if (revocation) revocations.committed(revocation);
      return user;
    },

    async remove(claims, id, { reason, correlationId }) {
      const actor = await service.activeActor(claims);
      if (!canDelete(actor, id)) throw accessDenied();
      const found = await store.users.findById(id);
      if (!found) throw notFound('User');
      // The ledger decides, under its own locks, so no deposit or transfer can land between check and removal.
      const removal = await deps.ledger.removeUser(id, correlationId);
      if (!removal.removed) throw new AppError('BUSINESS_RULE_VIOLATION', removal.detail);
      const revocation = await store.transaction(async (tx) => {
        const locked = await tx.users.lock(id, 'update');
        if (!locked) throw notFound('User');
        const revocation = revocations.allTokensOf(id, nextTokensValidFrom(locked, locked.lockedAt));
        await tx.users.delete(id);
        await revocations.record(tx, revocation, correlationId);
        const deleted = userDeletedEvent(id, correlationId);
        const byAdmin =
          actor.id === id
            ? []
            : [
                adminActionTakenEvent(
                  {
                    actor: actor.id,
                    action: 'user.delete',
                    subject: `user:${id}`,
                    owner: id,
                    reason,
                    detail: { username: found.username },
                  },
                  correlationId,
                ),
              ];
        await tx.enqueueEvents([deleted, ...byAdmin]);
        return revocation;
      });
      revocations.committed(revocation);
    },

    async setStatus(claims, id, status, { reason, correlationId }) {
      const actor = await service.activeActor(claims);
      if (actor.role !== 'admin') throw accessDenied('Only an administrator may change a user’s status');
      if (actor.id === id) {
        throw new AppError('BUSINESS_RULE_VIOLATION', 'An administrator cannot change their own status');
      }
      const { user, revocation } = await store.transaction(async (tx) => {
        // The cut-off is taken under the row lock, after every refresh or login that held it has committed.
        const locked = await tx.users.lock(id, 'update');
        if (!locked) throw notFound('User');
        const revocation =
          status === 'active'
            ? undefined
            : revocations.allTokensOf(id, nextTokensValidFrom(locked, locked.lockedAt));
        const updated = unwrap(
          await tx.users.update(id, { status, tokensValidFrom: revocation?.issued_before }),
        );
        if (revocation) await revocations.record(tx, revocation, correlationId);
        const change = {
          actor: actor.id,
          action: 'user.status_change',
          subject: `user:${id}`,
          owner: id,
          reason,
          detail: { from: locked.status, to: status },
        };
        await tx.enqueueEvents([adminActionTakenEvent(change, correlationId)]);
        return { user: updated, revocation };
      });
      if (revocation) revocations.committed(revocation);
      return user;
    },

    async findUsers(claims, criteria, page) {
      const actor = await service.activeActor(claims);
      if (actor.role !== 'admin') throw accessDenied('Only an administrator may look users up');
      return store.users.search(
        { ...criteria, email: criteria.email === undefined ? undefined : normalizeEmail(criteria.email) },
        page,
      );
    },

    async ensureAdmin(admin) {
      const problems = credentialProblems(admin);
      if (problems.length > 0) {
        throw new ConfigError(
          `Invalid configuration: ADMIN_USERNAME / ADMIN_EMAIL / ADMIN_PASSWORD: ${problems.join('; ')}`,
        );
      }
      const existing =
        (await store.users.findByUsername(admin.username)) ??
        (await store.users.findByEmail(normalizeEmail(admin.email)));
      if (existing) {
        if (existing.role !== 'admin') {
          deps.logger.warn(
            { username: existing.username },
            'the configured administrator name or e-mail belongs to an ordinary user; not promoting it',
          );
        }
        return;
      }
      const result = await store.users.insert({
        id: randomUUID(),
        username: admin.username,
        email: normalizeEmail(admin.email),
        passwordHash: await hasher.hash(admin.password),
        role: 'admin',
      });
      // A duplicate here means a concurrent start created the administrator first.
      if (result.ok) deps.logger.info({ username: admin.username }, 'created the configured administrator');
    },
  };
  return service;
}
