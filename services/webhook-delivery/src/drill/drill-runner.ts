import { randomBytes } from 'node:crypto';
import type { WebhookDrillBody, WebhookEventType } from '@payments/contracts';
import { signWebhookPayload, signWebhookPayloadWithSecrets } from '@payments/service-kit';
import { signingSecrets, type WebhookEndpoint } from '../domain/endpoint.js';
import { SIGNATURE_HEADER } from '../delivery/delivery-worker.js';
import type { SendResult, WebhookSender } from '../delivery/http-sender.js';
import { drillResult, judgeCase, planDrill, staleBySeconds, type PlannedCase } from './drill-plan.js';

export interface DrillRunnerDeps {
  /** The sender real deliveries use: same address guard, same per-attempt timeout. */
  sender: WebhookSender;
  /** The whole drill's budget; each send gets the least of this remainder and the delivery timeout. */
  budgetMs: number;
  /** The tolerance the stale case is measured against. */
  toleranceSeconds: number;
}

export interface DrillRunner {
  run(
    drillId: string,
    endpoint: WebhookEndpoint & { secrets: { open: true } },
    eventTypes: readonly WebhookEventType[],
  ): Promise<WebhookDrillBody>;
}

/** Sends a drill's cases one after another (their order is the point) and judges each answer. */
export function createDrillRunner(deps: DrillRunnerDeps): DrillRunner {
  return {
    async run(drillId, endpoint, eventTypes) {
      const startedAt = new Date();
      const deadline = performance.now() + deps.budgetMs;
      const now = Math.floor(startedAt.getTime() / 1000);
      const plan = planDrill(drillId, eventTypes, endpoint.apiVersion, now);
      const secrets = signingSecrets({
        ...endpoint.secrets,
        previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
      });

      const signatureOf = (planned: PlannedCase): { header: string; signedAt: number } => {
        const signedAt = Math.floor(Date.now() / 1000);
        if (planned.signing === 'stale') {
          const stale = signedAt - staleBySeconds(deps.toleranceSeconds);
          return { header: signWebhookPayloadWithSecrets(planned.body, secrets, stale), signedAt: stale };
        }
        if (planned.signing === 'forged') {
          const nobodys = `whsec_${randomBytes(32).toString('base64url')}`;
          return { header: signWebhookPayload(planned.body, nobodys, signedAt), signedAt };
        }
        return { header: signWebhookPayloadWithSecrets(planned.body, secrets, signedAt), signedAt };
      };

      const cases: WebhookDrillBody['cases'] = [];
      for (const planned of plan.cases) {
        const { header, signedAt } = signatureOf(planned);
        const remaining = Math.floor(deadline - performance.now());
        const shown = {
          case: planned.name,
          event_id: planned.eventId,
          event_type: planned.eventType,
          created: planned.created,
          signed_at: signedAt,
          expected: planned.expected,
        };
        if (remaining <= 0) {
          cases.push({
            ...shown,
            status_code: null,
            latency_ms: null,
            error: null,
            duplicate: null,
            outcome: 'not_sent',
            detail: `Not sent: the drill's ${deps.budgetMs} ms were spent on the cases before it`,
          });
          continue;
        }
        const sent: SendResult = await deps.sender.send(
          endpoint.url,
          planned.body,
          {
            [SIGNATURE_HEADER]: header,
            'webhook-id': planned.eventId,
            'webhook-attempt': String(planned.attempt),
            'webhook-drill': plan.id,
          },
          { timeoutMs: remaining },
        );
        const judged = judgeCase(
          planned,
          {
            statusCode: sent.statusCode,
            latencyMs: sent.latencyMs,
            error: sent.error,
            body: sent.responseBodyPrefix,
          },
          deps.toleranceSeconds,
        );
        cases.push({
          ...shown,
          status_code: sent.statusCode,
          latency_ms: sent.latencyMs,
          error: sent.statusCode === null ? sent.error : null,
          duplicate: judged.duplicate,
          outcome: judged.outcome,
          detail: judged.detail,
        });
      }
      return {
        id: plan.id,
        object: 'webhook_drill',
        endpoint_id: endpoint.id,
        url: endpoint.url,
        event_types: plan.eventTypes,
        tolerance_seconds: deps.toleranceSeconds,
        result: drillResult(cases.map((c) => c.outcome)),
        cases,
        started_at: startedAt.toISOString(),
        finished_at: new Date().toISOString(),
      };
    },
  };
}
