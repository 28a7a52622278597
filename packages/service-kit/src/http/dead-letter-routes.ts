import { Router, type Request, type RequestHandler } from 'express';
import { DeadLetterQuery, DeadLetterReplayBody, type QueueKey } from '@payments/contracts';
import type { AdminTrail } from '../admin-trail.js';
import type { AuthClaims } from '../auth.js';
import { BusUnavailableError, type DeadLetter, type EventBus } from '../bus/event-bus.js';
import { AppError, accessDenied, authRequired, notFound } from '../errors.js';
import { bodyValidator, queryValidator } from './validate.js';

const readQuery = queryValidator(DeadLetterQuery);
const readReplay = bodyValidator(DeadLetterReplayBody);

export interface DeadLetterRoutesOptions {
  bus: EventBus;
  /** The queues this service consumes: the only ones its broker user may read and replay. */
  queues: readonly QueueKey[];
  /** Verifies the bearer token (requireAuth). */
  auth: RequestHandler;
  /** Where each replay is recorded before it is made: a replay the trail cannot take is not made. */
  trail: AdminTrail;
}

/** A body that is JSON is shown parsed (an event envelope, normally); anything else as the text it is. */
export function renderDeadLetter(letter: DeadLetter): { event: unknown } | { raw: string } {
  try {
    return { event: JSON.parse(letter.body) as unknown };
  } catch {
    return { raw: letter.body };
  }
}

/**
 * `GET /admin/dead-letters/{queue}` and `POST /admin/dead-letters/{queue}/replay`, for admins: the dead letters of
 * the service's own queues, read without removing them, and moved back onto their queue. Every service that
 * consumes a queue mounts these; the gateway sends each queue's paths to its consumer.
 */
export function deadLetterRoutes({ bus, queues, auth, trail }: DeadLetterRoutesOptions): Router {
  const router = Router();

  const adminAndQueue = (req: Request): { admin: AuthClaims; queue: QueueKey } => {
    if (!req.auth) throw authRequired();
    if (req.auth.role !== 'admin')
      throw accessDenied('Only an administrator may read or replay dead letters');
    const queue = req.params.queue as QueueKey;
    if (!queues.includes(queue)) throw notFound(`Dead-letter queue ${JSON.stringify(queue)}`);
    return { admin: req.auth, queue };
  };

  const unavailable = () =>
    new AppError('SERVICE_UNAVAILABLE', 'The message broker cannot be reached; try again shortly');
  /** The broker being away is the one failure worth a retry; anything else stays a 500. */
  const onBus = async <T>(work: () => Promise<T>): Promise<T> => {
    if (!bus.isConnected()) throw unavailable();
    try {
      return await work();
    } catch (error) {
      if (error instanceof BusUnavailableError || !bus.isConnected()) throw unavailable();
      throw error;
    }
  };

  router.get('/admin/dead-letters/:queue', auth, async (req, res) => {
    const { queue } = adminAndQueue(req);
    const { limit } = readQuery(req);
    // Counted first: while a listing holds the letters, the broker does not count them.
    const count = await onBus(() => bus.countDeadLetters(queue));
    const letters = await onBus(() => bus.listDeadLetters(queue, limit));
    res.set('Cache-Control', 'no-store').json({
      queue,
      count: Math.max(count, letters.length),
      data: letters.map(renderDeadLetter),
    });
  });

  router.post('/admin/dead-letters/:queue/replay', auth, async (req, res) => {
    const { admin, queue } = adminAndQueue(req);
    // The body is optional: without it, everything the queue holds now.
    const { limit, reason } = req.body === undefined ? {} : readReplay(req);
    // Recorded first: the trail may hold a replay that then failed (answered 5xx), never one made unrecorded.
    await onBus(() =>
      trail.record(
        {
          actor: admin.userId,
          action: 'dead_letters.replay',
          subject: `dead_letter_queue:${queue}`,
          owner: null,
          reason: reason ?? null,
          detail: { queue, limit: limit ?? null },
        },
        String(req.id),
      ),
    );
    const replayed = await onBus(() => bus.replayDeadLetters(queue, limit));
    req.log.info({ admin_id: admin.userId, queue, limit: limit ?? null, replayed }, 'replayed dead letters');
    res.json({ queue, replayed });
  });

  return router;
}
