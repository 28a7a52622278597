import { Writable } from 'node:stream';
import { expect } from 'chai';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import {
  contextFromCarrier,
  createLogger,
  currentTraceCarrier,
  inSpan,
  isTracing,
  startTracing,
} from '../src/index.js';

/** A logger whose lines are kept, parsed. */
function keptLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('ledger', 'info', destination), lines };
}

describe('tracing', () => {
  it('starts no SDK when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    const tracing = startTracing('ledger', {});
    expect(tracing.started).to.equal(false);
    expect(isTracing()).to.equal(false);
    await inSpan('work', {}, (span) => {
      expect(span.isRecording()).to.equal(false);
      expect(currentTraceCarrier()).to.equal(null);
      return Promise.resolve();
    });
    expect(trace.getActiveSpan()).to.equal(undefined);
    await tracing.stop();
  });

  it('adds no trace fields to log lines when tracing is off', async () => {
    const { logger, lines } = keptLogger();
    await inSpan('work', {}, () => {
      logger.info('inside a span');
      return Promise.resolve();
    });
    expect(lines[0]).to.include({ msg: 'inside a span' });
    expect(lines[0]).not.to.have.property('trace_id');
  });

  describe('with an SDK registered in this process', () => {
    const exporter = new InMemorySpanExporter();
    let provider: NodeTracerProvider;

    before(() => {
      provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      provider.register();
    });
    after(async () => {
      await provider.shutdown();
      // Back to the API's no-ops, for whatever this worker runs next.
      trace.disable();
      context.disable();
      propagation.disable();
    });

    it('names the active span on every log line written inside it, and continues a carried trace', async () => {
      expect(isTracing()).to.equal(true);
      const { logger, lines } = keptLogger();
      let carrier: ReturnType<typeof currentTraceCarrier> = null;
      await inSpan('request', {}, async () => {
        await new Promise((resolve) => setImmediate(resolve));
        logger.info('after an await');
        carrier = currentTraceCarrier();
      });
      const [request] = exporter.getFinishedSpans();
      expect(lines[0]).to.include({
        trace_id: request?.spanContext().traceId,
        span_id: request?.spanContext().spanId,
      });
      await inSpan('consumer', { parent: contextFromCarrier(carrier) }, () => Promise.resolve());
      const consumer = exporter.getFinishedSpans()[1];
      expect(consumer?.spanContext().traceId).to.equal(request?.spanContext().traceId);
      expect(consumer?.parentSpanContext?.spanId).to.equal(request?.spanContext().spanId);
    });
  });
});
