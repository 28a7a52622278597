import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  DELIVERY_TO_RECEIVER,
  eventually,
  startTestReceiver,
  useStarted,
  useSystem,
  type TestReceiver,
} from '@payments/testkit';
import { rawApi, signUp } from '@payments/test-support';

/** A span as OTLP/JSON carries it, with the service whose resource sent it. */
interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: Omit<ExportedSpan, 'service'>[] }[];
  }[];
}

/** Every span the collector was sent (OTLP over HTTP, JSON), in the order received. */
function spansOf(collector: TestReceiver): ExportedSpan[] {
  return collector.calls('/v1/traces').flatMap((call) =>
    ((JSON.parse(call.body) as OtlpExport).resourceSpans ?? []).flatMap((resourceSpans) => {
      const service =
        resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value
          .stringValue ?? 'unknown';
      return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
        (scope.spans ?? []).map((span) => ({ ...span, service })),
      );
    }),
  );
}

describe('tracing a deposit across every hop, exported by OTLP', function () {
  this.timeout(180_000);

  // Started before the system, whose services export to it (a small OTLP/HTTP collector: it keeps what it gets).
  const collector = useStarted(async () => {
    const started = await startTestReceiver();
    started.on('/v1/traces', () => ({ status: 200, body: '{}' }));
    return started;
  });
  const system = useSystem(() => ({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    serviceEnv: { 'webhook-delivery': DELIVERY_TO_RECEIVER },
  }));
  const receiver = useStarted(startTestReceiver);
  const api = rawApi(system);

  it('makes one trace of a deposit: gateway, ledger, webhook-ingest, ledger again, webhook-delivery', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const endpoint = await api.request('POST', '/webhook-endpoints', {
      token,
      body: { url: `${receiver.url}/deposit`, events: ['transaction.completed'] },
      headers: { 'x-api-version': '1.1' },
    });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const account = await client.accounts.open({ currency: 'USD' });

    // The caller's own trace: the gateway continues it, so the deposit's spans are found by its id.
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const accepted = await api.request('POST', `/account/${account.id}/deposit`, {
      token,
      body: { amount: 12.5, currency: 'USD' },
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(accepted.status, accepted.text).to.equal(202);
    // The sandbox confirms the payment with its signed webhook; the ledger credits; webhook-delivery sends.
    await receiver.waitForCalls('/deposit', undefined, { timeoutMs: 30_000 });

    // In the order of the deposit's path; a service exports its spans within about 100 ms of their end.
    const path = [
      'gateway: POST /account/{id}/deposit',
      'ledger: POST /account/:id/deposit',
      'ledger: DepositRequested publish',
      'ledger: DepositRequested process',
      // The ledger asks the provider in the deposit's trace; the provider's webhook comes back into it.
      'ledger: provider create_payment',
      'webhook-ingest: webhook payment_intent.succeeded',
      'ledger: PaymentProcessed process',
      'ledger: TransactionCompleted publish',
      'webhook-delivery: TransactionCompleted process',
      'webhook-delivery: webhook send transaction.completed',
    ];
    const namesIn = (spans: ExportedSpan[]) => spans.map((span) => `${span.service}: ${span.name}`);
    const inTrace = () => spansOf(collector).filter((span) => span.traceId === traceId);
    await eventually(
      async () => namesIn(inTrace()),
      (names) => path.every((name) => names.includes(name)),
      { timeoutMs: 20_000 },
    ).catch(() => undefined);
    const traced = inTrace();
    expect(namesIn(traced)).to.include.members(path);
    // Its queries too: the acceptance's, the credit's.
    expect(
      traced.filter((span) => span.service === 'ledger' && /^(SELECT|WITH|INSERT|UPDATE)$/.test(span.name)),
    ).to.have.length.greaterThan(0);
    // One trace: every span's parent is in it, or is the caller's.
    const ids = new Set([callerSpanId, ...traced.map((span) => span.spanId)]);
    const orphans = traced.filter((span) => span.parentSpanId && !ids.has(span.parentSpanId));
    expect(orphans.map((span) => `${span.service}: ${span.name}`)).to.deep.equal([]);
  });
});
