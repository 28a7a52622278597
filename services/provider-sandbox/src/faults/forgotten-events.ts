import type { Logger } from '@payments/service-kit';

/**
 * The sandbox losing webhooks, for the reconciliation drill: an event of one of `types` is forgotten with probability
 * `ratio`. Its change has happened at the sandbox all the same (Stripe's own records are right); only the notification
 * never leaves. Each forgotten event is kept, so a drill can check that reconciliation found every one.
 */
export interface EventForgetting {
  /** 0 forgets nothing, 1 every event of `types`. */
  ratio: number;
  types: ReadonlySet<string>;
}

/** A forgotten event as GET /sandbox/forgotten-events answers it. */
export interface ForgottenEvent {
  id: string;
  type: string;
  object_id: string | null;
  /** The `transaction_id` in the metadata of the event's object, if it has one. */
  transaction_id: string | null;
  created: number;
}

interface StripeEventLike {
  id: string;
  type: string;
  created: number;
  data: { object: unknown };
}

export interface ForgottenEvents {
  /** Decides, once for each event, whether it is forgotten; one that is is logged and kept. */
  forgets(event: StripeEventLike): boolean;
  /** The events forgotten so far, in the order they were. */
  list(): ForgottenEvent[];
}

export function createForgottenEvents(
  forgetting: EventForgetting | undefined,
  logger: Logger,
): ForgottenEvents {
  const forgotten: ForgottenEvent[] = [];
  return {
    forgets(event) {
      // Math.random() < 1 always, so a ratio of 1 forgets every one and 0 none.
      if (!forgetting?.types.has(event.type) || Math.random() >= forgetting.ratio) return false;
      const object = event.data.object as { id?: unknown; metadata?: Record<string, unknown> | null };
      const transactionId = object.metadata?.transaction_id;
      forgotten.push({
        id: event.id,
        type: event.type,
        object_id: typeof object.id === 'string' ? object.id : null,
        transaction_id: typeof transactionId === 'string' ? transactionId : null,
        created: event.created,
      });
      logger.info(
        { provider_event_id: event.id, type: event.type },
        'a Stripe event was forgotten (SANDBOX_FORGET_EVENTS): it is not sent',
      );
      return true;
    },
    list: () => forgotten.map((event) => ({ ...event })),
  };
}
