import type { AnyEvent } from '@payments/contracts';
import { enqueueEvents, isDatabaseUp, type Knex } from '@payments/service-kit';
import { createApiKeyRepository, type ApiKeyRepository } from './api-key-repository.js';
import { createRevocationRepository, type RevocationRepository } from './revocation-repository.js';
import { createSigningKeyRepository, type SigningKeyRepository } from './signing-key-repository.js';
import { createUserRepository, type UserRepository } from './user-repository.js';

export interface IdentityTransaction {
  users: UserRepository;
  revocations: RevocationRepository;
  signingKeys: SigningKeyRepository;
  apiKeys: ApiKeyRepository;
  /** Events leave through the outbox, so they are published only if this transaction commits. */
  enqueueEvents(events: AnyEvent[]): Promise<void>;
}

export interface IdentityStore {
  users: UserRepository;
  revocations: RevocationRepository;
  apiKeys: ApiKeyRepository;
  transaction<T>(work: (tx: IdentityTransaction) => Promise<T>): Promise<T>;
  isUp(): Promise<boolean>;
}

export function createIdentityStore(knex: Knex): IdentityStore {
  return {
    users: createUserRepository(knex),
    revocations: createRevocationRepository(knex),
    apiKeys: createApiKeyRepository(knex),
    transaction: (work) =>
      knex.transaction((trx) =>
        work({
          users: createUserRepository(trx),
          revocations: createRevocationRepository(trx),
          signingKeys: createSigningKeyRepository(trx),
          apiKeys: createApiKeyRepository(trx),
          enqueueEvents: (events) => enqueueEvents(trx, events),
        }),
      ),
    isUp: () => isDatabaseUp(knex),
  };
}
