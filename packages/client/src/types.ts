import type { Static } from '@sinclair/typebox';
import type * as Contracts from '@payments/contracts';

/**
 * Every shape here is `Static<>` of the TypeBox schema the services validate with (packages/contracts): a field
 * that changes there changes here. Type-only: this file loads nothing of the contracts at run time.
 */

/** Spreads an intersection into one object type, so editors and declarations show plain fields. */
export type Flatten<T> = { [K in keyof T]: T[K] } & {};

export type ApiVersion = Contracts.ApiVersion;
export type ErrorCode = Contracts.ErrorCode;
export type FieldError = Static<typeof Contracts.FieldErrorView>;
export type Problem = Static<typeof Contracts.ProblemDetails>;

export type Discovery = Static<typeof Contracts.DiscoveryView>;
export type Token = Static<typeof Contracts.TokenView>;
export type LoginRequest = Static<typeof Contracts.LoginBody>;
export type NewUserRequest = Static<typeof Contracts.NewUserBody>;
export type UserUpdateRequest = Static<typeof Contracts.UserUpdateBody>;
export type StatusChangeRequest = Static<typeof Contracts.StatusChangeBody>;
/** The confirmation a deletion needs, and an admin's reason for deleting someone else. */
export type UserDeletionRequest = Flatten<Static<typeof Contracts.UserDeletionBody> & { confirm: true }>;
/** Why an admin acts on another user's resource: kept in the trail of admin actions. */
export type AdminReasonRequest = Static<typeof Contracts.AdminReasonBody>;
export type User = Static<typeof Contracts.UserView>;

export type OpenAccountRequest = Static<typeof Contracts.OpenAccountBody>;
export type Account = Static<typeof Contracts.AccountView>;
export type Balance = Static<typeof Contracts.BalanceView>;
export type PastBalance = Static<typeof Contracts.PastBalanceView>;
export type PayoutAccount = Static<typeof Contracts.PayoutAccountView>;
export type ReplacePayoutAccountRequest = Static<typeof Contracts.ReplacePayoutAccountBody>;

export type DepositRequest = Static<typeof Contracts.DepositBody>;
export type MoneyRequest = Static<typeof Contracts.MoneyBody>;
export type TransferRequest = Static<typeof Contracts.TransferBody>;
export type RefundRequest = Static<typeof Contracts.RefundBody>;

export type Statement = Static<typeof Contracts.StatementView>;
export type StatementEntry = Static<typeof Contracts.StatementEntryView>;

export type Currency = Static<typeof Contracts.CurrencyView>;
export type CurrencyList = Static<typeof Contracts.CurrencyList>;
export type CurrencySupport = Static<typeof Contracts.CurrencySupportView>;
export type RegionCurrencies = Static<typeof Contracts.RegionCurrenciesView>;
export type CurrencyStatistics = Static<typeof Contracts.CurrencyStatisticsView>;
export type RateTable = Static<typeof Contracts.RateTableView>;
export type ExchangeRate = Static<typeof Contracts.ExchangeRateView>;

export type NewApiKeyRequest = Static<typeof Contracts.NewApiKeyBody>;
export type ApiKey = Static<typeof Contracts.ApiKeyView>;
export type ApiKeyWithSecret = Static<typeof Contracts.ApiKeyWithSecretView>;
export type ApiKeyScope = Contracts.ApiKeyScope;

export type NewWebhookEndpointRequest = Static<typeof Contracts.NewWebhookEndpointBody>;
export type WebhookEndpointUpdateRequest = Static<typeof Contracts.WebhookEndpointUpdateBody>;
export type RotateSecretRequest = Static<typeof Contracts.RotateSecretBody>;
export type WebhookEndpoint = Static<typeof Contracts.WebhookEndpointView>;
export type WebhookEndpointWithSecret = Static<typeof Contracts.WebhookEndpointWithSecretView>;
export type WebhookDelivery = Static<typeof Contracts.WebhookDeliveryView>;
export type WebhookDeliveryDetail = Static<typeof Contracts.WebhookDeliveryDetailView>;
export type WebhookEventType = Contracts.WebhookEventType;
export type WebhookDrill = Static<typeof Contracts.WebhookDrillView>;
export type WebhookDrillCase = Static<typeof Contracts.WebhookDrillCaseView>;
/** The body of an event a drill sends: marked `drill: true`, typed `drill.<event type>`, never a real event. */
export type WebhookDrillEvent = Static<typeof Contracts.WebhookDrillEventPayload>;

export type ProviderMismatch = Static<typeof Contracts.ProviderMismatchView>;
export type ReconciliationDecisionRequest = Static<typeof Contracts.ReconciliationDecisionRequest>;
export type ReconciliationRun = Static<typeof Contracts.ReconciliationRunView>;
export type AdminAction = Static<typeof Contracts.AdminActionView>;
export type OverdrawnAccount = Static<typeof Contracts.OverdrawnAccountView>;
/** Any user's transaction as an operator sees it: with its owner, never the payer's client secret. */
export type AdminTransaction = Static<typeof Contracts.AdminTransactionView>;
export type TransactionTimeline = Static<typeof Contracts.TransactionTimelineView>;
export type TimelineEntry = Static<typeof Contracts.TimelineEntryView>;
/** A page of overdrawn accounts, with what live users owe and what the platform lost, per currency. */
export type OverdrawnReport = Static<typeof Contracts.OverdrawnAccountPage>;
/** A consumer queue, by the name of the service that consumes it. */
export type DeadLetterQueue = Static<typeof Contracts.DeadLetterQueueKey>;
export type DeadLetterList = Static<typeof Contracts.DeadLetterList>;
export type DeadLetterReplayRequest = Static<typeof Contracts.DeadLetterReplayBody>;
export type DeadLetterReplay = Static<typeof Contracts.DeadLetterReplayView>;
/** Activity over the last hour or day for charts, and the current gauges; `missing` names parts left out. */
export type Overview = Static<typeof Contracts.OverviewView>;
/** Card deposits still open to a chargeback whose money has left, per currency and per user. */
export type ChargebackExposure = Static<typeof Contracts.ChargebackExposureView>;

export type Pagination = Static<typeof Contracts.Pagination>;
/** A page of a list paged by cursor: while `has_more`, ask again `starting_after` its last item's `id`. */
export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
}
/** A page of a list that also pages by offset: `pagination` says where it is in the whole. */
export interface Page<T> extends CursorPage<T> {
  pagination: Pagination;
}

/** A query as the caller writes it: every parameter with a server default may be left out. */
type QueryInput<T> = Flatten<Partial<T>>;
export type PageQuery = QueryInput<Static<typeof Contracts.PageQuery>>;
/** With `metadata`: your transactions whose metadata holds each pair, sent as `metadata[key]=value`. */
export type HistoryQuery = QueryInput<Static<typeof Contracts.HistoryQuery>> & {
  metadata?: Record<string, string>;
};
export type CurrencyPageQuery = QueryInput<Static<typeof Contracts.CurrencyPageQuery>>;
export type RatesQuery = QueryInput<Static<typeof Contracts.RatesQuery>>;
export type WebhookEndpointListQuery = QueryInput<Static<typeof Contracts.WebhookEndpointListQuery>>;
export type WebhookDeliveryListQuery = QueryInput<Static<typeof Contracts.WebhookDeliveryListQuery>>;
export type StatementQuery = QueryInput<Omit<Static<typeof Contracts.StatementQuery>, 'format'>>;
export type ReconciliationQuery = QueryInput<Omit<Static<typeof Contracts.ReconciliationQuery>, 'format'>>;
export type UserSearchQuery = QueryInput<Static<typeof Contracts.UserSearchQuery>>;
export type DeadLetterQuery = QueryInput<Static<typeof Contracts.DeadLetterQuery>>;
export type AdminActionQuery = QueryInput<Static<typeof Contracts.AdminActionQuery>>;
/** `user_id` is required: whose accounts. */
export type AdminAccountQuery = QueryInput<Omit<Static<typeof Contracts.AdminAccountQuery>, 'user_id'>> & {
  user_id: string;
};
export type OverviewQuery = QueryInput<Static<typeof Contracts.OverviewQuery>>;
export type ChargebackExposureQuery = QueryInput<Static<typeof Contracts.ChargebackExposureQuery>>;
/** With `metadata`: transactions whose metadata holds each pair, sent as `metadata[key]=value`. */
export type AdminTransactionQuery = QueryInput<Static<typeof Contracts.AdminTransactionQuery>> & {
  metadata?: Record<string, string>;
};
type EventListParams = Static<typeof Contracts.EventListQuery>;
/** GET /events: `created` bounds in Unix seconds, sent as `created[gte]=…` and so on. */
export type EventListQuery = QueryInput<
  Pick<EventListParams, 'limit' | 'starting_after' | 'ending_before' | 'type'>
> & { created?: { gte?: number; gt?: number; lte?: number; lt?: number } };

type TransactionView = Static<typeof Contracts.TransactionView>;
/** Names `K` only if the contract's transaction has every one of them: a renamed field fails to compile here. */
type FieldsOf<T, K extends keyof T> = K;
/** What version 1.1 adds to a transaction (ledger's `renderTransaction`); a 1.0 answer has none of them. */
export type FieldsAddedIn1_1 = FieldsOf<TransactionView, 'fee' | 'exchange_rate' | 'converted_amount'>;

/**
 * A transaction-shaped answer as the version `V` renders it: without the 1.1 fields in 1.0; from 1.1 with `fee`
 * always, and `exchange_rate` / `converted_amount` for transfers between currencies. A union of versions gives a
 * union of shapes.
 */
export type AtVersion<
  T extends Partial<Record<FieldsAddedIn1_1, unknown>>,
  V extends ApiVersion,
> = V extends '1.0' ? Flatten<Omit<T, FieldsAddedIn1_1>> : Flatten<Omit<T, 'fee'> & { fee: number }>;

export type Transaction<V extends ApiVersion = ApiVersion> = AtVersion<TransactionView, V>;
export type UnconfirmedWithdrawal<V extends ApiVersion = ApiVersion> = AtVersion<
  Static<typeof Contracts.UnconfirmedWithdrawalView>,
  V
>;
/** What waits for reconciliation: withdrawals without a confirmation, then mismatches with the provider. */
export type ReconciliationItem<V extends ApiVersion = ApiVersion> =
  UnconfirmedWithdrawal<V> | ProviderMismatch;

type EventPayload = Static<typeof Contracts.WebhookEventPayload>;
/** The object an event of type `T` carries, rendered at the endpoint's version `V`. */
export type WebhookEventObject<
  T extends WebhookEventType,
  V extends ApiVersion,
> = T extends `transaction.${string}` ? Transaction<V> : T extends `account.${string}` ? Account : User;

/**
 * An outgoing webhook event as an endpoint receives it, narrowed by `type` and `api_version`: check
 * `event.type === 'transaction.completed'` and `event.data.object` is a transaction of the endpoint's version.
 */
export type WebhookEvent<V extends ApiVersion = ApiVersion> = {
  [T in WebhookEventType]: {
    [W in V]: Flatten<
      Omit<EventPayload, 'type' | 'api_version' | 'data'> & {
        type: T;
        api_version: W;
        data: { object: WebhookEventObject<T, W> };
      }
    >;
  }[V];
}[WebhookEventType];

/** The JSON Web Key Set tokens are signed with (`/.well-known/jwks.json`). */
export interface SigningKeys {
  keys: { kid: string; kty: string; alg?: string; [parameter: string]: unknown }[];
}
