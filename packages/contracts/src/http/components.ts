import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  AdminTransactionPage,
  AdminTransactionQuery,
  TransactionTimelineView,
} from './admin-transactions.js';
import { ApiKeyPage, ApiKeyWithSecretView, NewApiKeyBody } from './api-keys.js';
import {
  AccountPage,
  AccountView,
  AdminAccountQuery,
  BalanceView,
  OpenAccountBody,
  PayoutAccountView,
  ReplacePayoutAccountBody,
} from './accounts.js';
import { AdminReasonBody, DiscoveryView, PageQuery } from './common.js';
import {
  CurrencyList,
  CurrencyPage,
  CurrencyPageQuery,
  CurrencySearchQuery,
  CurrencyStatisticsView,
  CurrencySupportView,
  CurrencyView,
  ExchangeRateView,
  RateTableView,
  RatesQuery,
  RegionCurrenciesView,
} from './currencies.js';
import {
  DeadLetterList,
  DeadLetterQuery,
  DeadLetterReplayBody,
  DeadLetterReplayView,
} from './dead-letters.js';
import {
  DepositBody,
  HistoryQuery,
  MoneyBody,
  RefundBody,
  TransactionPage,
  TransactionView,
  TransferBody,
} from './money.js';
import { EventListQuery, EventPage } from './events.js';
import { ChargebackExposureQuery, ChargebackExposureView, OverviewQuery, OverviewView } from './overview.js';
import { ProblemDetails, WebhookErrorView } from './problem.js';
import {
  AdminActionPage,
  AdminActionQuery,
  OverdrawnAccountPage,
  ProviderMismatchView,
  ReconciliationDecisionRequest,
  ReconciliationPage,
  ReconciliationQuery,
  ReconciliationRunView,
} from './reconciliation.js';
import { BalanceQuery, PastBalanceView, StatementQuery, StatementView } from './statements.js';
import {
  LoginBody,
  NewUserBody,
  StatusChangeBody,
  TokenView,
  UserDeletionBody,
  UserPage,
  UserSearchQuery,
  UserUpdateBody,
  UserView,
} from './users.js';
import {
  NewWebhookEndpointBody,
  WebhookDeliveryDetailView,
  WebhookDeliveryListQuery,
  WebhookDeliveryPage,
  WebhookDeliveryView,
  WebhookEndpointListQuery,
  WebhookEndpointPage,
  WebhookEndpointUpdateBody,
  WebhookEndpointView,
  WebhookEndpointWithSecretView,
  WebhookEventPayload,
} from './webhook-endpoints.js';
import { WebhookDrillView } from './webhook-drills.js';
import { PaymentStatusWebhookBody, PaymentWebhookBody, ProviderEventBody } from './webhooks.js';

/** Bodies no service validates, documented only: the kit's probes and identity's key set. */
export const HealthView = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });
export const ReadinessView = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not ready'), Type.Literal('stopping')], {
      description: '`stopping`: draining after SIGTERM, still serving, about to close',
    }),
    checks: Type.Record(Type.String(), Type.Boolean(), {
      description: 'Each thing this process needs to serve, and whether it is up',
    }),
  },
  { additionalProperties: false },
);
export const JwksView = Type.Object({
  keys: Type.Array(
    Type.Object({
      kid: Type.String(),
      kty: Type.String(),
      alg: Type.Optional(Type.String()),
      use: Type.Optional(Type.String()),
      crv: Type.Optional(Type.String({ description: 'The curve of an EC key, e.g. P-256' })),
      x: Type.Optional(Type.String({ description: 'An EC key: the x coordinate, base64url' })),
      y: Type.Optional(Type.String({ description: 'An EC key: the y coordinate, base64url' })),
    }),
  ),
});

/**
 * The bodies the API document names (its components), by name. Request bodies are the very schemas the services
 * validate with, responses the contracts' views; nothing here is a copy.
 */
export const COMPONENT_SCHEMAS = {
  Problem: ProblemDetails,
  WebhookError: WebhookErrorView,
  Discovery: DiscoveryView,
  Health: HealthView,
  Readiness: ReadinessView,
  Jwks: JwksView,
  Login: LoginBody,
  Token: TokenView,
  NewUser: NewUserBody,
  UserUpdate: UserUpdateBody,
  UserDeletion: UserDeletionBody,
  StatusChange: StatusChangeBody,
  AdminReason: AdminReasonBody,
  User: UserView,
  UserPage,
  NewApiKey: NewApiKeyBody,
  ApiKeyWithSecret: ApiKeyWithSecretView,
  ApiKeyPage,
  DeadLetterList,
  DeadLetterReplay: DeadLetterReplayBody,
  DeadLetterReplayResult: DeadLetterReplayView,
  OpenAccount: OpenAccountBody,
  Account: AccountView,
  PayoutAccount: PayoutAccountView,
  ReplacePayoutAccount: ReplacePayoutAccountBody,
  AccountPage,
  Balance: BalanceView,
  PastBalance: PastBalanceView,
  BalanceAnswer: Type.Unsafe({
    anyOf: [{ $ref: '#/components/schemas/Balance' }, { $ref: '#/components/schemas/PastBalance' }],
    description: 'The balance now, or with `at` the booked balance at that moment',
  }),
  Statement: StatementView,
  DepositRequest: DepositBody,
  MoneyRequest: MoneyBody,
  TransferRequest: TransferBody,
  RefundRequest: RefundBody,
  Transaction: TransactionView,
  TransactionPage,
  AdminTransactionPage,
  TransactionTimeline: TransactionTimelineView,
  ReconciliationPage,
  ReconciliationCase: ProviderMismatchView,
  ReconciliationDecision: ReconciliationDecisionRequest,
  ReconciliationRun: ReconciliationRunView,
  AdminActionPage,
  OverdrawnAccountPage,
  Overview: OverviewView,
  ChargebackExposure: ChargebackExposureView,
  Currency: CurrencyView,
  CurrencyPage,
  CurrencyList,
  CurrencySupport: CurrencySupportView,
  RegionCurrencies: RegionCurrenciesView,
  CurrencyStatistics: CurrencyStatisticsView,
  RateTable: RateTableView,
  ExchangeRate: ExchangeRateView,
  PaymentWebhook: PaymentWebhookBody,
  PaymentStatusWebhook: PaymentStatusWebhookBody,
  ProviderEvent: ProviderEventBody,
  NewWebhookEndpoint: NewWebhookEndpointBody,
  WebhookEndpointUpdate: WebhookEndpointUpdateBody,
  WebhookEndpoint: WebhookEndpointView,
  WebhookEndpointWithSecret: WebhookEndpointWithSecretView,
  WebhookEndpointPage,
  WebhookDelivery: WebhookDeliveryView,
  WebhookDeliveryDetail: WebhookDeliveryDetailView,
  WebhookDeliveryPage,
  WebhookEvent: WebhookEventPayload,
  WebhookDrill: WebhookDrillView,
  EventPage,
} satisfies Record<string, TSchema>;
export type ComponentName = keyof typeof COMPONENT_SCHEMAS;

/** The query schemas the services validate with, by name: each property is a parameter of the operations. */
export const QUERY_SCHEMAS = {
  AdminAccountQuery,
  AdminActionQuery,
  AdminTransactionQuery,
  BalanceQuery,
  ChargebackExposureQuery,
  CurrencyPageQuery,
  CurrencySearchQuery,
  DeadLetterQuery,
  EventListQuery,
  HistoryQuery,
  OverviewQuery,
  PageQuery,
  RatesQuery,
  ReconciliationQuery,
  StatementQuery,
  UserSearchQuery,
  WebhookDeliveryListQuery,
  WebhookEndpointListQuery,
} satisfies Record<string, TObject>;
export type QueryName = keyof typeof QUERY_SCHEMAS;
