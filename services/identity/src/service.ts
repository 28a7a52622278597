import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  measureBusConnection,
  createRevocationList,
  openServiceDatabase,
  serveHttp,
  splitList,
  startOutboxRelay,
  startService,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import {
  loginLimits,
  MAX_API_KEY_TOKEN_TTL_SECONDS,
  MAX_TOKEN_TTL_SECONDS,
  type IdentityConfig,
} from './config.js';
import { createIdentityStore } from './data/identity-store.js';
import { createLedgerClient } from './data/ledger-client.js';
import { createLoginThrottle } from './data/login-throttle.js';
import { createRegistrationThrottle } from './data/registration-throttle.js';
import { createThrottleStore } from './data/throttle-store.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { loadSigningKeys } from './data/signing-key-files.js';
import { createPasswordHasher } from './domain/password-hasher.js';
import { verificationKeys } from './domain/signing-keys.js';
import { createTokenIssuer } from './domain/token-issuer.js';
import { subscribeToRevocations } from './events/revocation-subscriber.js';
import { adminRoutes } from './http/admin-routes.js';
import { apiKeyRoutes } from './http/api-key-routes.js';
import { keyRoutes } from './http/key-routes.js';
import { sessionRoutes } from './http/session-routes.js';
import { userRoutes } from './http/user-routes.js';
import { createApiKeyService } from './use-cases/api-key-service.js';
import { createRevocationService } from './use-cases/revocation-service.js';
import { createSessionService } from './use-cases/session-service.js';
import { announceSigningKeys } from './use-cases/signing-key-announcement.js';
import { createUserService } from './use-cases/user-service.js';

const PRUNE_INTERVAL_MS = 3600_000;

export async function startIdentity(config: IdentityConfig, deps: ServiceDeps = {}): Promise<RunningService> {
  const logger = deps.logger ?? createLogger('identity', config.LOG_LEVEL);
  const serviceCredential = checkedServiceCredential(config, logger, {
    // Without a configured key, identity signs with one it generated under DATA_DIR.
    JWT_PRIVATE_KEY: !config.JWT_PRIVATE_KEY && !config.JWT_PRIVATE_KEY_FILE,
  });
  const limits = loginLimits(config);
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing('identity', config);
    shutdown.add('tracing', () => tracing.stop());
    const keys = await loadSigningKeys(config, logger);

    const knex = await openServiceDatabase(config, { migrations, privileges, logger }, shutdown);
    const throttles = await createThrottleStore({ redisUrl: config.REDIS_URL, logger });
    shutdown.add('throttle store', () => throttles.close());
    const throttle = createLoginThrottle(throttles, limits);
    const registrationThrottle = createRegistrationThrottle(throttles, {
      maxPerWindow: config.REGISTRATION_MAX_PER_WINDOW,
      windowSeconds: config.REGISTRATION_WINDOW_SECONDS,
    });
    const bus = await connectBus(config, logger, shutdown, deps.bus);
    const metrics = createMetrics('identity');
    measureBusConnection(metrics, bus);

    const store = createIdentityStore(knex);
    const relay = startOutboxRelay({ knex, bus, logger, metrics });
    shutdown.add('outbox relay', () => relay.stop());
    const revocations = createRevocationService({
      store,
      list: createRevocationList(),
      longestTokenLifetimeSeconds: MAX_TOKEN_TTL_SECONDS,
      wake: relay.wake,
    });
    // Subscribe before loading, so a revocation made in between is not missed; after a reconnect (a new
    // broadcast queue) load again, for what other identity processes revoked meanwhile.
    const subscription = await subscribeToRevocations(bus, revocations.list, () => {
      revocations
        .load()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not reload revocations'));
    });
    shutdown.add('revocation subscriber', () => subscription.stop());
    await revocations.load();
    const pruning = setInterval(() => {
      revocations
        .load()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not prune revocations'));
    }, PRUNE_INTERVAL_MS);
    pruning.unref();
    shutdown.add('revocation pruning', () => clearInterval(pruning));

    const hasher = await createPasswordHasher();
    const issuer = createTokenIssuer({
      keys,
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      ttlSeconds: config.TOKEN_TTL_SECONDS,
      sessionMaxSeconds: config.SESSION_MAX_SECONDS,
      revocations: revocations.list,
    });
    const users = createUserService({
      store,
      hasher,
      revocations,
      ledger: createLedgerClient(config.LEDGER_URL, serviceCredential.token),
      loginThrottle: throttle,
      registrationThrottle,
      logger,
    });
    const sessions = createSessionService({
      store,
      hasher,
      issuer,
      throttle,
      revocations,
      sessionMaxSeconds: config.SESSION_MAX_SECONDS,
    });

    const apiKeys = createApiKeyService({
      store,
      issuer,
      revocations,
      mode: config.API_KEY_MODE ?? (config.NODE_ENV === 'production' ? 'live' : 'test'),
      tokenTtlSeconds: config.API_KEY_TOKEN_TTL_SECONDS,
      longestTokenTtlSeconds: MAX_API_KEY_TOKEN_TTL_SECONDS,
    });

    if (config.ADMIN_USERNAME || config.ADMIN_EMAIL || config.ADMIN_PASSWORD) {
      await users.ensureAdmin({
        username: config.ADMIN_USERNAME ?? '',
        email: config.ADMIN_EMAIL ?? '',
        password: config.ADMIN_PASSWORD ?? '',
      });
    }

    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        // Its events wait in the outbox while the broker is away; logins need only the database.
        readiness: [{ name: 'database', check: () => store.isUp() }],
        shutdown,
      },
      (routes) => {
        const trusted = splitList(config.TRUSTED_PROXIES);
        // req.ip believes X-Forwarded-For only from these (the gateway); anyone else is their socket address.
        routes.set('trust proxy', trusted.length > 0 ? trusted : false);
        routes.use(keyRoutes(keys, revocations));
        routes.use(userRoutes(users, issuer.verifier));
        routes.use(sessionRoutes(sessions, issuer.verifier));
        routes.use(adminRoutes(users, issuer.verifier));
        routes.use(apiKeyRoutes(apiKeys, issuer.verifier));
      },
    );
    const address = await serveHttp('identity', app, config, shutdown);
    // Once this process serves its keys, so the verifiers' fetch the announcement causes finds them.
    await announceSigningKeys(
      { store, wake: relay.wake },
      verificationKeys(keys).map((key) => key.kid),
    );
    logger.info({ url: address.url }, 'identity is listening');
    return address;
  });
}
