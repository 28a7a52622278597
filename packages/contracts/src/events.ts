import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { compileSchema } from './validation.js';

const Uuid = Type.String({ format: 'uuid' });
const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$' });
/** Integer minor units; bounded by the ledger's maximum amount, so always a safe integer. */
const Minor = Type.Integer({ minimum: 0 });
const TransactionType = Type.Union([
  Type.Literal('deposit'),
  Type.Literal('withdrawal'),
  Type.Literal('transfer'),
]);

/** Where a provider event happened: the ledger acts only on objects of its own mode and account. */
const ProviderScope = {
  /** The provider's mode (Stripe: `livemode`); absent from stand-ins, which count as test mode. */
  livemode: Type.Optional(Type.Boolean()),
  /** The connected account the object lives on (Stripe Connect: the event's `account`); absent: the platform's. */
  account: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

/**
 * A provider's confirmation (webhook-ingest → ledger). `payment_id` is the provider's object (Stripe: `pi_…`,
 * `po_…`), which must be the one the ledger recorded for the transaction; `transaction_id` is what the object names
 * (its metadata, else its own id), a hint that must agree. SPEC's stand-ins name the transaction itself as the object.
 */
export const PaymentProcessedData = Type.Object(
  {
    transaction_id: Type.String({ minLength: 1, maxLength: 200 }),
    payment_id: Type.String({ minLength: 1, maxLength: 200 }),
    /**
     * completed and failed end the transaction; canceled ends a payment the provider canceled (no money moved);
     * attempt_failed is a payment attempt that failed while the payment may still succeed (Stripe's
     * payment_intent.payment_failed): the deposit stays pending with the reason.
     */
    status: Type.Union([
      Type.Literal('completed'),
      Type.Literal('failed'),
      Type.Literal('canceled'),
      Type.Literal('attempt_failed'),
    ]),
    /** Where the confirmation came from: which webhook endpoint. */
    source: Type.Union([Type.Literal('payment'), Type.Literal('payment-status'), Type.Literal('provider')]),
    /** Set when the provider reported an amount; the ledger fails the transaction when it disagrees. */
    amount: Type.Optional(Minor),
    currency: Type.Optional(CurrencyCode),
    /** The kind of money movement the provider confirmed, when it said (provider events do). */
    movement: Type.Optional(Type.Union([Type.Literal('payment'), Type.Literal('payout')])),
    failure_reason: Type.Optional(Type.String({ maxLength: 500 })),
    provider_event_id: Type.Optional(Type.String({ maxLength: 200 })),
    provider_event_type: Type.Optional(Type.String({ maxLength: 200 })),
    ...ProviderScope,
  },
  { additionalProperties: false },
);

/**
 * A provider's refund or dispute of a payment (webhook-ingest → ledger). A refund carries the provider's refunded
 * total for the payment so far (Stripe's cumulative `amount_refunded`), so duplicates and reordering change
 * nothing: the ledger reverses only what that total adds to what it already reversed.
 */
export const PaymentAdjustedData = Type.Object(
  {
    /** The deposit, as the provider names it (its metadata.transaction_id, else its payment intent). */
    transaction_id: Type.String({ minLength: 1, maxLength: 200 }),
    adjustment: Type.Union([
      Type.Literal('refund'),
      Type.Literal('dispute_opened'),
      Type.Literal('dispute_won'),
      Type.Literal('dispute_lost'),
      // One refund the ledger asked for (its refund_id) reached a final state at the provider.
      Type.Literal('refund_succeeded'),
      Type.Literal('refund_failed'),
    ]),
    /** refund: the total refunded so far; dispute: the disputed amount. Minor units. */
    amount: Minor,
    currency: CurrencyCode,
    /**
     * refund_succeeded / refund_failed: the reversal the ledger created for the refund it asked for (the refund's
     * metadata.refund_id).
     */
    refund_id: Type.Optional(Uuid),
    /** Why a refund failed, as the provider says (refund_failed). */
    failure_reason: Type.Optional(Type.String({ maxLength: 500 })),
    /** The dispute id (each dispute takes effect once); for a refund, the newest refund id or the charge id. */
    reference: Type.String({ minLength: 1, maxLength: 200 }),
    /**
     * The provider's payment adjusted (Stripe: the charge's or dispute's PaymentIntent, else its charge), which must
     * be the one the ledger recorded for the deposit. Absent: `transaction_id` is that payment.
     */
    payment_reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    provider_event_id: Type.String({ minLength: 1, maxLength: 200 }),
    provider_event_type: Type.String({ minLength: 1, maxLength: 200 }),
    ...ProviderScope,
  },
  { additionalProperties: false },
);

/**
 * A connected account's readiness as the provider reported it (webhook-ingest → ledger): Stripe's `account.updated`.
 * The ledger takes it for the linked payout account it names only when it is newer (`created`) than what it holds;
 * an older one that disagrees has the ledger ask the provider for the account as it stands.
 */
export const PayoutAccountUpdatedData = Type.Object(
  {
    /** The connected account (Stripe: `acct_…`, the event's object). */
    account_id: Type.String({ minLength: 1, maxLength: 200 }),
    payouts_enabled: Type.Boolean(),
    /** Stripe's `requirements.currently_due`: what the provider still needs before it pays out. */
    currently_due: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 }),
    /** Stripe's `requirements.disabled_reason`, when payouts are disabled. */
    disabled_reason: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
    /** When the provider made the event (Stripe's `created`, Unix seconds): orders the updates of one account. */
    created: Type.Integer({ minimum: 0 }),
    provider_event_id: Type.String({ minLength: 1, maxLength: 200 }),
    livemode: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const MoneyMovementRequested = {
  transaction_id: Uuid,
  account_id: Uuid,
  user_id: Uuid,
  amount: Minor,
  currency: CurrencyCode,
};

export const DepositRequestedData = Type.Object(
  {
    ...MoneyMovementRequested,
    /** The payment method the deposit is paid with at once (POST /account/{id}/deposit's `payment_method`). */
    payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);
export const WithdrawalRequestedData = Type.Object(MoneyMovementRequested, { additionalProperties: false });
export const TransferRequestedData = Type.Object(
  { ...MoneyMovementRequested, to_account_id: Uuid },
  { additionalProperties: false },
);

export const TransactionSettledData = Type.Object(
  {
    transaction_id: Uuid,
    account_id: Uuid,
    user_id: Uuid,
    type: TransactionType,
    amount: Minor,
    currency: CurrencyCode,
    failure_reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

/**
 * A reversal booked: a refund or lost dispute of a completed deposit (the user gives the money back), or money the
 * provider returned against the books (a paid payout that came back, a payment captured after its deposit ended:
 * the user is credited). Always a new transaction linked to the original.
 */
export const TransactionReversedData = Type.Object(
  {
    transaction_id: Uuid,
    original_transaction_id: Uuid,
    account_id: Uuid,
    user_id: Uuid,
    amount: Minor,
    currency: CurrencyCode,
    reason: Type.Union([
      Type.Literal('refund'),
      Type.Literal('dispute_lost'),
      Type.Literal('payout_returned'),
      Type.Literal('late_payment'),
    ]),
  },
  { additionalProperties: false },
);

export const AccountOpenedData = Type.Object(
  { account_id: Uuid, user_id: Uuid, currency: CurrencyCode },
  { additionalProperties: false },
);

export const UserDeletedData = Type.Object({ user_id: Uuid }, { additionalProperties: false });

/** A user's public details after a change (never a password or anything secret). */
export const UserUpdatedData = Type.Object(
  { user_id: Uuid, username: Type.String({ minLength: 1 }), email: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const TokenRevokedData = Type.Object(
  {
    /** A single token, or every token of `user_id` issued before `issued_before` (unix seconds). */
    jti: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    user_id: Type.Optional(Uuid),
    issued_before: Type.Optional(Type.Integer({ minimum: 0 })),
    /** With `issued_before`: the one token of the user that stays valid (the session that changed the password). */
    except_jti: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** Unix seconds after which the revocation no longer matters (the token has expired anyway). */
    expires_at: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/**
 * An admin acted on a resource that is not theirs (another user's, or the platform's own such as a dead-letter
 * queue), or a user made or revoked a credential of their own (`api_key.create`, `api_key.revoke`; actor and owner
 * are then the user): the service that did it announces it, and the ledger keeps it in the append-only trail.
 */
export const AdminActionTakenData = Type.Object(
  {
    /** Who: the admin's user id. */
    actor: Uuid,
    /** What, as `<resource>.<verb>`, e.g. `user.status_change`, `webhook_endpoint.disable`. */
    action: Type.String({ pattern: '^[a-z_]+(\\.[a-z_]+)+$', maxLength: 100 }),
    /** On what, as `<resource>:<id>`, e.g. `webhook_endpoint:<uuid>`, `dead_letter_queue:ledger`. */
    subject: Type.String({ minLength: 3, maxLength: 200 }),
    /** Whose: the user the resource belongs to; null for the platform's own. */
    owner: Type.Union([Uuid, Type.Null()]),
    /** Why, as the admin said; null when they gave no reason. */
    reason: Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Null()]),
    /** What the action changed (before and after), never a secret. */
    detail: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);

/**
 * The keys identity signs and verifies tokens with changed (a rotation, or a key removed): every verifier fetches
 * the JWKS again at once. `kids` is the set identity now serves, for the record; the JWKS itself is what counts.
 */
export const SigningKeysChangedData = Type.Object(
  {
    kids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
    }),
  },
  { additionalProperties: false },
);

/** Event type → its data schema and routing key. Adding an event is one line here. */
export const EVENTS = {
  PaymentProcessed: { routingKey: 'payment.processed', data: PaymentProcessedData },
  PaymentAdjusted: { routingKey: 'payment.adjusted', data: PaymentAdjustedData },
  PayoutAccountUpdated: { routingKey: 'payout-account.updated', data: PayoutAccountUpdatedData },
  DepositRequested: { routingKey: 'deposit.requested', data: DepositRequestedData },
  WithdrawalRequested: { routingKey: 'withdrawal.requested', data: WithdrawalRequestedData },
  TransferRequested: { routingKey: 'transfer.requested', data: TransferRequestedData },
  TransactionCompleted: { routingKey: 'transaction.completed', data: TransactionSettledData },
  TransactionFailed: { routingKey: 'transaction.failed', data: TransactionSettledData },
  TransactionCanceled: { routingKey: 'transaction.canceled', data: TransactionSettledData },
  TransactionReversed: { routingKey: 'transaction.reversed', data: TransactionReversedData },
  /** A pending transaction changed without ending: a payment attempt failed (failure_reason says why). */
  TransactionUpdated: { routingKey: 'transaction.updated', data: TransactionSettledData },
  AccountOpened: { routingKey: 'account.opened', data: AccountOpenedData },
  UserDeleted: { routingKey: 'user.deleted', data: UserDeletedData },
  UserUpdated: { routingKey: 'user.updated', data: UserUpdatedData },
  TokenRevoked: { routingKey: 'token.revoked', data: TokenRevokedData },
  SigningKeysChanged: { routingKey: 'signing-keys.changed', data: SigningKeysChangedData },
  AdminActionTaken: { routingKey: 'admin.action.taken', data: AdminActionTakenData },
} as const satisfies Record<string, { routingKey: string; data: TSchema }>;

export type EventType = keyof typeof EVENTS;
export type EventData<T extends EventType> = Static<(typeof EVENTS)[T]['data']>;

export const EVENT_VERSION = 1;

export const EventEnvelopeSchema = Type.Object(
  {
    id: Uuid,
    type: Type.String({ minLength: 1 }),
    version: Type.Integer({ minimum: 1 }),
    occurred_at: Type.String({ format: 'date-time' }),
    correlation_id: Type.String({ minLength: 1, maxLength: 200 }),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

export interface EventEnvelope<T extends EventType = EventType> {
  id: string;
  type: T;
  version: number;
  occurred_at: string;
  correlation_id: string;
  data: EventData<T>;
}

export type AnyEvent = { [T in EventType]: EventEnvelope<T> }[EventType];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(EVENTS, value);
}

export function routingKeyOf(type: EventType): string {
  return EVENTS[type].routingKey;
}

const checkEnvelope = compileSchema(EventEnvelopeSchema);
const checkData = Object.fromEntries(
  Object.entries(EVENTS).map(([type, { data }]) => [type, compileSchema(data as TSchema)]),
) as Record<EventType, ReturnType<typeof compileSchema>>;

export type EventValidation = { ok: true; event: AnyEvent } | { ok: false; errors: string[] };

/** Validates an envelope and its data against the schemas; used on publish and on consume. */
export function validateEvent(value: unknown): EventValidation {
  const envelope = checkEnvelope(value);
  if (!envelope.ok) return envelope;
  const type = (value as { type: unknown }).type;
  if (!isEventType(type)) return { ok: false, errors: [`/type: unknown event type ${JSON.stringify(type)}`] };
  const data = checkData[type]((value as { data: unknown }).data);
  if (!data.ok) return { ok: false, errors: data.errors.map((e) => `/data${e}`) };
  return { ok: true, event: value as AnyEvent };
}

export function createEvent<T extends EventType>(
  type: T,
  data: EventData<T>,
  options: { id: string; correlationId: string; occurredAt?: Date },
): EventEnvelope<T> {
  return {
    id: options.id,
    type,
    version: EVENT_VERSION,
    occurred_at: (options.occurredAt ?? new Date()).toISOString(),
    correlation_id: options.correlationId,
    data,
  };
}
