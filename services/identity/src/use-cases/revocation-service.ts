import type { RevocationList } from '@payments/service-kit';
import type { IdentityStore, IdentityTransaction } from '../data/identity-store.js';
import type { Revocation } from '../data/revocation-repository.js';
import { tokenRevokedEvent } from '../events/identity-events.js';

export interface RevocationService {
  list: RevocationList;
  /**
   * Every token of the user issued before `issuedBefore` (where their `tokens_valid_from` moves, under the user's
   * row lock: `nextTokensValidFrom`), except `keepJti` when given: the session that asked for it, e.g. a password
   * change, stays logged in.
   */
  allTokensOf(userId: string, issuedBefore: number, keepJti?: string): Revocation & { issued_before: number };
  oneToken(jti: string, expiresAt: number): Revocation;
  /**
   * Stores the revocation and its TokenRevoked event in the caller's transaction; false (and nothing stored)
   * when that token was revoked already.
   */
  record(tx: IdentityTransaction, revocation: Revocation, correlationId: string): Promise<boolean>;
  /** After the commit: this process refuses the tokens at once; the outbox relay tells every other one. */
  committed(revocation: Revocation): void;
  /** False when that token was revoked already, e.g. by a concurrent refresh of it. */
  revoke(revocation: Revocation, correlationId: string): Promise<boolean>;
  active(): Promise<Revocation[]>;
  /** Loads what is still in force, so a restart forgets nothing, and forgets what has expired. */
  load(): Promise<void>;
}

export interface RevocationServiceDeps {
  store: IdentityStore;
  list: RevocationList;
  /** The longest any token can live, whatever the TTL setting was when it was issued. */
  longestTokenLifetimeSeconds: number;
  /** Asks the outbox relay to publish now rather than at its next poll. */
  wake: () => void;
  now?: () => number;
}

export function createRevocationService(deps: RevocationServiceDeps): RevocationService {
  const { store, list } = deps;
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const service: RevocationService = {
    list,
    allTokensOf(userId, issuedBefore, keepJti) {
      return {
        user_id: userId,
        issued_before: issuedBefore,
        ...(keepJti && { except_jti: keepJti }),
        // It must outlive every token it covers, including ones issued under an older, longer TTL.
        expires_at: issuedBefore + deps.longestTokenLifetimeSeconds,
      };
    },
    oneToken: (jti, expiresAt) => ({ jti, expires_at: expiresAt }),
    async record(tx, revocation, correlationId) {
      if (!(await tx.revocations.insert(revocation))) return false;
      await tx.enqueueEvents([tokenRevokedEvent(revocation, correlationId)]);
      return true;
    },
    committed(revocation) {
      list.add(revocation);
      deps.wake();
    },
    async revoke(revocation, correlationId) {
      const recorded = await store.transaction((tx) => service.record(tx, revocation, correlationId));
      if (recorded) service.committed(revocation);
      return recorded;
    },
    active: () => store.revocations.listActive(now()),
    async load() {
      await store.revocations.deleteExpired(now());
      for (const revocation of await store.revocations.listActive(now())) list.add(revocation);
    },
  };
  return service;
}
