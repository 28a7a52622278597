import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '@payments/service-kit';
import { formatPolicies, formatRemaining, type RateLimitState } from '../domain/rate-limit-headers.js';
import type { Limiter } from '../data/rate-limit-store.js';

/**
 * Spends a point of `limiter` for the request's key (none: the request is not limited by this policy) and sets
 * the RateLimit headers for every policy applied so far; an exhausted policy answers 429 with `Retry-After`.
 */
export function rateLimit(limiter: Limiter, keyOf: (req: Request) => string | undefined): RequestHandler {
  return async (req, res, next) => {
    const key = keyOf(req);
    if (key === undefined) return next();
    const outcome = await limiter.consume(key);
    const states = appliedLimits(res);
    states.push(outcome);
    res.set('RateLimit-Policy', formatPolicies(states));
    res.set('RateLimit', formatRemaining(states));
    if (outcome.allowed) return next();
    res.set('Retry-After', String(outcome.resetSeconds));
    next(
      new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Too many requests (${outcome.policy.quota} per ${outcome.policy.windowSeconds} s); ` +
          `retry in ${outcome.resetSeconds} s`,
      ),
    );
  };
}

function appliedLimits(res: Response): RateLimitState[] {
  res.locals.rateLimits ??= [];
  return res.locals.rateLimits as RateLimitState[];
}
