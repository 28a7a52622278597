import type { Request, Response } from 'express';
import type { Problem } from '@payments/contracts';
import { sendProblem } from '@payments/service-kit';
import { isProviderWebhookPath } from '../domain/route-table.js';

/** problem+json everywhere, except on webhooks, whose callers expect `{ error }` (SPEC, Errors). */
export function renderError(
  problem: Problem,
  req: Request,
  res: Response,
  headers: Record<string, string> = {},
) {
  if (isProviderWebhookPath(req.path)) {
    res.status(problem.status).set(headers).json({ error: problem.detail });
    return;
  }
  sendProblem(res, problem, headers);
}
