import { busRightsOf } from '@payments/contracts';
import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  measureBusConnection,
  databaseReadiness,
  deadLetterRoutes,
  DEVELOPMENT_SANDBOX_API_KEY,
  followIdentityTokens,
  openServiceDatabase,
  requireAuth,
  serveHttp,
  startInboxRetention,
  startOutboxRelay,
  startService,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import {
  payoutAccountAutoLinkOf,
  paymentPageBaseOf,
  providerObjectPolicyOf,
  providerSettingsOf,
  type LedgerConfig,
} from './config.js';
import { createAccountRepository } from './data/account-repository.js';
import { createAdminActionRepository } from './data/admin-action-repository.js';
import { createChargebackExposureRepository } from './data/chargeback-exposure-repository.js';
import { createCurrencyDirectory } from './data/currency-directory.js';
import { createMaintenanceRepository } from './data/maintenance-repository.js';
import { createMoneyRequestRepository } from './data/money-request-repository.js';
import { createOverviewRepository } from './data/overview-repository.js';
import { createPayoutAccountRepository } from './data/payout-account-repository.js';
import { createProviderObjectRepository } from './data/provider-object-repository.js';
import { createProviderPaymentRepository } from './data/provider-payment-repository.js';
import { createReconciliationRepository } from './data/reconciliation-repository.js';
import { createPendingTransactionRepository } from './data/pending-transaction-repository.js';
import { createReversalRepository } from './data/reversal-repository.js';
import { createServiceMetricsReader } from './data/service-metrics.js';
import { createRefundRepository } from './data/refund-repository.js';
import { createSettlementRepository } from './data/settlement-repository.js';
import { createStatementRepository } from './data/statement-repository.js';
import { createSystemAccounts } from './data/system-accounts.js';
import { createTransactionRepository } from './data/transaction-repository.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { feeRule, type FeeSchedule } from './domain/fees.js';
import { startLedgerConsumer } from './events/ledger-consumer.js';
import { createStripeProvider } from './provider/stripe-provider.js';
import type { PaymentProvider } from './provider/payment-provider.js';
import { createAdminTransactionRepository } from './data/admin-transaction-repository.js';
import { createTimelineParts } from './data/timeline-parts.js';
import type { LedgerHttpDeps } from './http/ledger-http-deps.js';
import { createAdminTransactions } from './use-cases/admin-transactions.js';
import { mountLedgerRoutes } from './http/ledger-routes.js';
import { createAccounts } from './use-cases/accounts.js';
import { createAdminActions } from './use-cases/admin-actions.js';
import { startMaintenance } from './use-cases/maintenance.js';
import { createMoneyRequests } from './use-cases/money-requests.js';
import { createPayoutAccounts } from './use-cases/payout-accounts.js';
import { createProviderPayments } from './use-cases/provider-payments.js';
import { createReconciliation } from './use-cases/reconciliation.js';
import { exportPendingTransactions } from './use-cases/pending-transactions.js';
import { createRefunds } from './use-cases/refunds.js';
import { createReversals } from './use-cases/reversals.js';
import { createChargebackExposure } from './use-cases/chargeback-exposure.js';
import { createOverviews } from './use-cases/overview.js';
import { createSettlement } from './use-cases/settlement.js';
import { createStatements } from './use-cases/statements.js';
import { createTransactions } from './use-cases/transactions.js';

export function feeScheduleOf(config: LedgerConfig): FeeSchedule {
  return {
    deposit: feeRule(config.FEE_DEPOSIT_FIXED, config.FEE_DEPOSIT_PERCENT),
    withdrawal: feeRule(config.FEE_WITHDRAWAL_FIXED, config.FEE_WITHDRAWAL_PERCENT),
    transfer: feeRule(config.FEE_TRANSFER_FIXED, config.FEE_TRANSFER_PERCENT),
  };
}

export interface LedgerDeps extends ServiceDeps {
  /** The payment provider to ask, instead of the one the configuration names (tests: a provider that is down). */
  provider?: PaymentProvider;
  /** A fault a test injects: called after a confirmation's commit, before its ack (e2e: a crash there). */
  afterConfirmationCommit?: (transactionId: string) => void;
}

export async function startLedger(config: LedgerConfig, deps: LedgerDeps = {}): Promise<RunningService> {
  const logger = deps.logger ?? createLogger('ledger', config.LOG_LEVEL);
  const fees = feeScheduleOf(config);
  const providerSettings = providerSettingsOf(config);
  const linkOnWithdrawal = payoutAccountAutoLinkOf(config);
  const paymentPageBase = paymentPageBaseOf(config);
  if (paymentPageBase === null && providerSettings.provider === 'stripe')
    logger.warn('PUBLIC_URL is unset: deposits show their owners no payment_url (ADR 0128)');
  const serviceCredential = checkedServiceCredential(config, logger, {
    STRIPE_SECRET_KEY: config.STRIPE_SECRET_KEY === DEVELOPMENT_SANDBOX_API_KEY,
  });
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing('ledger', config);
    shutdown.add('tracing', () => tracing.stop());
    const knex = await openServiceDatabase(config, { migrations, privileges, logger }, shutdown);
    const metrics = createMetrics('ledger');
    const bus = await connectBus(config, logger, shutdown, deps.bus, { metrics });
    measureBusConnection(metrics, bus);
    // One cache of the system accounts' ids for every repository that books entries.
    const systemAccounts = createSystemAccounts();
    const outbox = startOutboxRelay({ knex, bus, logger, metrics });
    shutdown.add('outbox relay', () => outbox.stop());
    const currencies = createCurrencyDirectory({
      baseUrl: config.CURRENCY_URL,
      ttlMs: config.CURRENCY_CACHE_TTL_SECONDS * 1000,
      rateTtlMs: config.RATE_CACHE_TTL_SECONDS * 1000,
      rateStaleGraceMs: config.RATE_STALE_GRACE_SECONDS * 1000,
      logger,
    });
    const adminActions = createAdminActions({ store: createAdminActionRepository(knex) });
    const accounts = createAccounts({
      store: createAccountRepository(knex),
      currencies,
      outbox,
      maxAccountsPerUser: config.MAX_ACCOUNTS_PER_USER,
    });
    const provider =
      deps.provider ??
      (providerSettings.provider === 'stripe' ? createStripeProvider(providerSettings) : null);
    const providerRequestStore = createProviderPaymentRepository(knex, systemAccounts);
    const providerPayments = createProviderPayments({
      requests: providerRequestStore,
      objects: createProviderObjectRepository(knex),
      provider,
      policy: providerObjectPolicyOf(config),
      outbox,
      logger,
      metrics,
    });
    if (provider) shutdown.add('provider requests', () => providerPayments.stop());
    const settlement = createSettlement({
      store: createSettlementRepository(knex, systemAccounts),
      providerPayments,
      outbox,
      logger,
      holdExpiryMs: config.HOLD_EXPIRY_SECONDS * 1000,
      recoveryIntervalMs: Math.min(config.HOLD_SWEEP_INTERVAL_MS, 5_000),
      afterConfirmationCommit: deps.afterConfirmationCommit,
    });
    shutdown.add('transfer settlements', () => settlement.stop());
    const reversals = createReversals({
      store: createReversalRepository(knex, systemAccounts),
      providerPayments,
      outbox,
      metrics,
    });
    const reconciliationStore = createReconciliationRepository(knex, systemAccounts);
    const reconciliation = createReconciliation({
      store: reconciliationStore,
      provider,
      outbox,
      logger,
      metrics,
      intervalMs: config.RECONCILIATION_INTERVAL_SECONDS * 1000,
      graceMs: config.RECONCILIATION_GRACE_SECONDS * 1000,
      lookbackMs: config.RECONCILIATION_LOOKBACK_SECONDS * 1000,
    });
    if (provider) shutdown.add('provider reconciliation', () => reconciliation.stop());
    exportPendingTransactions({ store: createPendingTransactionRepository(knex), metrics });
    const payoutAccounts = createPayoutAccounts({
      store: createPayoutAccountRepository(knex),
      provider,
      linkOnWithdrawal,
      livemode: providerObjectPolicyOf(config).livemode,
    });
    const consumer = await startLedgerConsumer({
      payoutAccounts,
      bus,
      settlement,
      reversals,
      accounts,
      adminActions,
      providerPayments,
    });
    shutdown.add('ledger consumer', () => consumer.stop());
    const { verifier, followed } = await followIdentityTokens(config, {
      serviceToken: serviceCredential.token,
      bus,
      shutdown,
      logger,
    });
    const maintenance = startMaintenance({
      store: createMaintenanceRepository(knex, systemAccounts),
      outbox,
      logger,
      holdExpiryMs: config.HOLD_EXPIRY_SECONDS * 1000,
      depositExpiryMs: config.DEPOSIT_EXPIRY_SECONDS * 1000,
      idempotencyTtlMs: config.IDEMPOTENCY_TTL_HOURS * 3_600_000,
      intervalMs: config.HOLD_SWEEP_INTERVAL_MS,
    });
    shutdown.add('maintenance', () => maintenance.stop());
    const inboxRetention = startInboxRetention(knex, { retentionDays: config.INBOX_RETENTION_DAYS, logger });
    shutdown.add('inbox retention', () => inboxRetention.stop());

    const auth = requireAuth(verifier);
    const refunds = createRefunds({
      store: createRefundRepository(knex, systemAccounts),
      provider,
      currencies,
      maxAmount: config.MAX_AMOUNT,
      outbox,
      logger,
    });
    shutdown.add('refunds', () => refunds.stop());
    const overviews = createOverviews({
      store: createOverviewRepository(knex, {
        reconciliation: reconciliationStore,
        providerRequests: providerRequestStore,
      }),
      broker: bus,
      readMetrics: createServiceMetricsReader({
        urls: { identity: config.IDENTITY_URL, 'webhook-delivery': config.WEBHOOK_DELIVERY_URL },
        serviceToken: serviceCredential.token,
        timeoutMs: config.OVERVIEW_PART_TIMEOUT_MS,
      }),
      partTimeoutMs: config.OVERVIEW_PART_TIMEOUT_MS,
      logger,
    });
    const chargebackExposure = createChargebackExposure({
      store: createChargebackExposureRepository(knex),
      windowDays: config.DISPUTE_WINDOW_DAYS,
    });
    const httpDeps: LedgerHttpDeps = {
      accounts,
      moneyRequests: createMoneyRequests({
        store: createMoneyRequestRepository(knex),
        currencies,
        fees,
        maxAmount: config.MAX_AMOUNT,
        payoutAccounts,
        paysOutThroughProvider: provider !== null,
        paysInThroughProvider: provider !== null,
        settleTransfer: settlement.submitTransfer,
        outbox,
      }),
      refunds,
      transactions: createTransactions({ store: createTransactionRepository(knex), accounts }),
      statements: createStatements({ store: createStatementRepository(knex), accounts }),
      payoutAccounts,
      adminActions,
      reversals,
      maintenance,
      currencies,
      reconciliation,
      overviews,
      chargebackExposure,
      adminTransactions: createAdminTransactions({
        store: createAdminTransactionRepository(knex),
        ...createTimelineParts({
          webhookIngestUrl: config.WEBHOOK_INGEST_URL,
          webhookDeliveryUrl: config.WEBHOOK_DELIVERY_URL,
          serviceToken: serviceCredential.token,
        }),
        logger,
      }),
      paymentPageBase,
    };
    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        // Money requests go through the outbox: the ledger serves them while the broker is away.
        readiness: [databaseReadiness(knex), { name: 'revocations', check: followed.sync.isLoaded }],
        shutdown,
      },
      (routes) => {
        mountLedgerRoutes(routes, auth, httpDeps);
        // The ledger keeps the trail: its own admins' replays go straight into it.
        routes.use(
          deadLetterRoutes({ bus, queues: busRightsOf('ledger').consumes, auth, trail: adminActions }),
        );
      },
    );
    const address = await serveHttp('ledger', app, config, shutdown);
    logger.info({ url: address.url }, 'ledger listening');
    return address;
  });
}
