import type { WebhookEventType } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';

export interface DrillLimits {
  /** At most one drill per endpoint this often. */
  endpointIntervalSeconds: number;
  /** At most this many drills per user in any hour, whichever endpoints. */
  perUserPerHour: number;
}

export type DrillAdmission =
  { admitted: true } | { admitted: false; retryAfterSeconds: number; reason: string };

export interface DrillRepository {
  /**
   * Records a drill about to start if the limits allow it. Serialised per user, so two requests at once never
   * both pass; every admitted drill counts, whatever it then finds.
   */
  admit(
    drill: { id: string; endpointId: string; userId: string },
    limits: DrillLimits,
  ): Promise<DrillAdmission>;
  /** The event types last delivered to any of the user's endpoints in the past 30 days, newest first. */
  recentEventTypes(userId: string, limit: number): Promise<WebhookEventType[]>;
}

const HOUR_SECONDS = 3600;
const clamp = (seconds: number, most: number) => Math.min(most, Math.max(1, seconds));

export function createDrillRepository(knex: Knex): DrillRepository {
  return {
    admit(drill, limits) {
      return knex.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`webhook-drill:${drill.userId}`]);
        const { rows } = (await trx.raw(
          `SELECT
             (SELECT extract(epoch FROM clock_timestamp() - max(created_at)) FROM webhook_drills WHERE endpoint_id = ?)
               AS since_endpoint,
             (SELECT count(*) FROM webhook_drills
               WHERE user_id = ? AND created_at > clock_timestamp() - interval '1 hour') AS in_hour,
             (SELECT extract(epoch FROM clock_timestamp() - min(created_at)) FROM webhook_drills
               WHERE user_id = ? AND created_at > clock_timestamp() - interval '1 hour') AS since_oldest`,
          [drill.endpointId, drill.userId, drill.userId],
        )) as { rows: { since_endpoint: string | null; in_hour: string; since_oldest: string | null }[] };
        const row = rows[0]!;
        const sinceEndpoint = row.since_endpoint === null ? null : Number(row.since_endpoint);
        if (sinceEndpoint !== null && sinceEndpoint < limits.endpointIntervalSeconds) {
          return {
            admitted: false,
            retryAfterSeconds: clamp(
              Math.ceil(limits.endpointIntervalSeconds - sinceEndpoint),
              limits.endpointIntervalSeconds,
            ),
            reason: `This endpoint was drilled less than ${limits.endpointIntervalSeconds} s ago`,
          };
        }
        if (Number(row.in_hour) >= limits.perUserPerHour) {
          return {
            admitted: false,
            retryAfterSeconds: clamp(Math.ceil(HOUR_SECONDS - Number(row.since_oldest ?? 0)), HOUR_SECONDS),
            reason: `You have run ${limits.perUserPerHour} drills in the past hour, the most allowed`,
          };
        }
        await trx('webhook_drills')
          .where({ user_id: drill.userId })
          .andWhere('created_at', '<', trx.raw("now() - interval '1 day'"))
          .delete();
        // The clock now, not the transaction's start: this one may have waited on the lock for another.
        await trx('webhook_drills').insert({
          id: drill.id,
          endpoint_id: drill.endpointId,
          user_id: drill.userId,
          created_at: trx.raw('clock_timestamp()'),
        });
        return { admitted: true };
      });
    },

    async recentEventTypes(userId, limit) {
      const rows = (await knex('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('e.user_id', userId)
        .andWhere('d.created_at', '>', knex.raw("now() - interval '30 days'"))
        .groupBy('d.event_type')
        .select('d.event_type')
        .max('d.created_at as last')
        .orderBy('last', 'desc')
        .limit(limit)) as { event_type: WebhookEventType }[];
      return rows.map((row) => row.event_type);
    },
  };
}
