import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  ADMIN_API_KEY_SCOPES,
  apiKeyTokenId,
  isApiKey,
  type ApiKeyMode,
  type ApiKeyScope,
} from '@payments/contracts';
import {
  accessDenied,
  adminActionTakenEvent,
  authRequired,
  notFound,
  validationError,
  type AuthClaims,
  type Page,
  type PageRequest,
} from '@payments/service-kit';
import type { ApiKey } from '../data/api-key-repository.js';
import type { IdentityStore } from '../data/identity-store.js';
import type { IssuedToken, TokenIssuer } from '../domain/token-issuer.js';
import type { RevocationService } from './revocation-service.js';
import { mustBeActive } from './user-service.js';

export interface NewKeyRequest {
  name: string;
  expiresAt?: string;
  scopes?: ApiKeyScope[];
}

export interface ExchangedKey {
  issued: IssuedToken;
  key: ApiKey;
}

export interface ApiKeyService {
  /** The key and its secret, which nothing keeps but its hash. */
  create(
    claims: AuthClaims,
    request: NewKeyRequest,
    correlationId: string,
  ): Promise<ApiKey & { secret: string }>;
  list(claims: AuthClaims, page: PageRequest): Promise<Page<ApiKey>>;
  /** Revoked in the database, refused by this process at once and by every other once the event arrives. */
  revoke(claims: AuthClaims, id: string, correlationId: string): Promise<void>;
  /** For the gateway: a key still good, of a user still active, for a short-lived token carrying its powers. */
  exchange(secret: string): Promise<ExchangedKey>;
}

export interface ApiKeyServiceDeps {
  store: IdentityStore;
  issuer: TokenIssuer;
  revocations: RevocationService;
  mode: ApiKeyMode;
  tokenTtlSeconds: number;
  /** The longest a token for a key may live, whatever the setting was when it was issued. */
  longestTokenTtlSeconds: number;
  now?: () => Date;
}

/** Ten years: a key that should live longer than that should not expire at all. */
const LONGEST_EXPIRY_MS = 10 * 365 * 86_400_000;

/** SHA-256: the secret is 32 random bytes, so a slow hash would add nothing but a cost on every exchange (ADR 0121). */
export const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret).digest();

const refused = () => authRequired('The API key is invalid, expired or revoked');

/** A restricted key manages no keys: what it could make or revoke would be beyond what it was given. */
const isAdminScope = (scope: ApiKeyScope) => ADMIN_API_KEY_SCOPES.includes(scope);

function mayManageKeys(claims: AuthClaims): void {
  if (claims.apiKey?.scopes) throw accessDenied('A restricted API key cannot manage API keys');
}

function expiryOf(value: string | undefined, now: Date): Date | null {
  if (value === undefined) return null;
  const expiresAt = new Date(value);
  const problem = Number.isNaN(expiresAt.getTime())
    ? 'must be a date-time'
    : expiresAt.getTime() <= now.getTime()
      ? 'must be in the future'
      : expiresAt.getTime() - now.getTime() > LONGEST_EXPIRY_MS
        ? 'must be at most 10 years ahead'
        : null;
  if (problem) throw validationError([{ field: 'expires_at', message: problem }], `expires_at ${problem}`);
  return expiresAt;
}

export function createApiKeyService(deps: ApiKeyServiceDeps): ApiKeyService {
  const { store, revocations } = deps;
  const now = deps.now ?? (() => new Date());
  const actorOf = async (claims: AuthClaims) => mustBeActive(await store.users.findById(claims.userId));

  return {
    async create(claims, request, correlationId) {
      mayManageKeys(claims);
      const actor = await actorOf(claims);
      const scopes = request.scopes ?? null;
      if (scopes?.some(isAdminScope) && actor.role !== 'admin') {
        throw accessDenied('Only an administrator’s key may carry admin scopes');
      }
      // A key with an admin scope acts with the admin's role everywhere it reaches: one that also had a user's
      // scope would do as admin what that scope allows (`money`: refund anyone's deposit). So it has only admin
      // scopes, or none.
      if (scopes?.some(isAdminScope) && !scopes.every(isAdminScope)) {
        throw validationError(
          [{ field: 'scopes', message: 'admin scopes cannot be mixed with other scopes' }],
          'A key with admin scopes has only admin scopes: make another key for the rest',
        );
      }
      // A secret key made with another key is that key's equal, never more: a secret key acts as its user.
      const expiresAt = expiryOf(request.expiresAt, now());
      const prefix = `${scopes ? 'rk' : 'sk'}_${deps.mode}_`;
      const secret = `${prefix}${randomBytes(32).toString('hex')}`;
      const id = randomUUID();
      const key = await store.transaction(async (tx) => {
        const created = await tx.apiKeys.insert({
          id,
          userId: actor.id,
          name: request.name,
          prefix,
          last4: secret.slice(-4),
          secretHash: hashSecret(secret),
          scopes,
          livemode: deps.mode === 'live',
          expiresAt,
        });
        await tx.enqueueEvents([
          adminActionTakenEvent(
            {
              actor: actor.id,
              action: 'api_key.create',
              subject: `api_key:${id}`,
              owner: actor.id,
              reason: null,
              detail: {
                name: request.name,
                prefix,
                last4: created.last4,
                scopes,
                expires_at: expiresAt?.toISOString() ?? null,
                ...(claims.apiKey && { created_with_api_key: claims.apiKey.id }),
              },
            },
            correlationId,
          ),
        ]);
        return created;
      });
      return { ...key, secret };
    },

    async list(claims, page) {
      mayManageKeys(claims);
      const actor = await actorOf(claims);
      return store.apiKeys.listActive(actor.id, page);
    },

    async revoke(claims, id, correlationId) {
      mayManageKeys(claims);
      const actor = await actorOf(claims);
      // Every token a key was exchanged for carries the key's jti; none outlives the longest token lifetime.
      const revocation = revocations.oneToken(
        apiKeyTokenId(id),
        Math.floor(now().getTime() / 1000) + deps.longestTokenTtlSeconds,
      );
      await store.transaction(async (tx) => {
        const revoked = await tx.apiKeys.revoke(actor.id, id);
        if (!revoked) throw notFound('API key');
        await revocations.record(tx, revocation, correlationId);
        await tx.enqueueEvents([
          adminActionTakenEvent(
            {
              actor: actor.id,
              action: 'api_key.revoke',
              subject: `api_key:${id}`,
              owner: actor.id,
              reason: null,
              detail: { name: revoked.name, prefix: revoked.prefix, last4: revoked.last4 },
            },
            correlationId,
          ),
        ]);
      });
      revocations.committed(revocation);
    },

    async exchange(secret) {
      if (!isApiKey(secret)) throw refused();
      const key = await store.apiKeys.findByHash(hashSecret(secret));
      if (!key || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= now().getTime())) {
        throw refused();
      }
      const user = mustBeActive(await store.users.findById(key.userId));
      const issued = deps.issuer.issueForKey(user, key, deps.tokenTtlSeconds);
      if (!issued) throw refused();
      await store.apiKeys.touch(key.id);
      return { issued, key };
    },
  };
}
