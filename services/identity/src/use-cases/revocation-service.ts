import type { RevocationList } from '@payments/service-kit';
import type { IdentityStore, IdentityTransaction } from '../data/identity-store.js';
import type { Revocation } from '../data/revocation-repository.js';
import { tokenRevokedEvent } from '../events/identity-events.js';

export interface RevocationService {
  list: RevocationList;
  /**
   * Every token of the user issued up to now (their `tokens_valid_from` moves to `issued_before`), except
   * `keepJti` when given: the session that asked for it, e.g. a password change, stays logged in.
   */
  allTokensOf(userId: string, keepJti?: string): Revocation & { issued_before: number };
  oneToken(jti: string, expiresAt: number): Revocation;
  /** Stores the revocation and its TokenRevoked event in the caller's transaction. */
  record(tx: IdentityTransaction, revocation: Revocation, correlationId: string): Promise<void>;
  /** After the commit: this process refuses the tokens at once; the outbox relay tells every other one. */
  committed(revocation: Revocation): void;
  revoke(revocation: Revocation, correlationId: string): Promise<void>;
  active(): Promise<Revocation[]>;
  /** Loads what is still in force, so a restart forgets nothing, and forgets what has expired. */
  load(): Promise<void>;
}

export interface RevocationServiceDeps {
  store: IdentityStore;
  list: RevocationList;
  tokenTtlSeconds: number;
  /** Asks the outbox relay to publish now rather than at its next poll. */
  wake: () => void;
  now?: () => number;
}

export function createRevocationService(deps: RevocationServiceDeps): RevocationService {
  const { store, list } = deps;
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const service: RevocationService = {
    list,
    allTokensOf(userId, keepJti) {
      // Tokens carry whole seconds: revoking "before the next second" covers every token issued so far.
      const issuedBefore = now() + 1;
      return {
        user_id: userId,
        issued_before: issuedBefore,
        ...(keepJti && { except_jti: keepJti }),
        expires_at: issuedBefore + deps.tokenTtlSeconds,
      };
    },
    oneToken: (jti, expiresAt) => ({ jti, expires_at: expiresAt }),
    async record(tx, revocation, correlationId) {
      await tx.revocations.insert(revocation);
      await tx.enqueueEvents([tokenRevokedEvent(revocation, correlationId)]);
    },
    committed(revocation) {
      list.add(revocation);
      deps.wake();
    },
    async revoke(revocation, correlationId) {
      await store.transaction((tx) => service.record(tx, revocation, correlationId));
      service.committed(revocation);
    },
    active: () => store.revocations.listActive(now()),
    async load() {
      await store.revocations.deleteExpired(now());
      for (const revocation of await store.revocations.listActive(now())) list.add(revocation);
    },
  };
  return service;
}
