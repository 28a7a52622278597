import { Writable } from 'node:stream';
import { expect } from 'chai';
import { trace } from '@opentelemetry/api';
import { createLogger, currentTraceCarrier, inSpan, isTracing, startTracing } from '../src/index.js';

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
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('ledger', 'info', destination);
    await inSpan('work', {}, () => {
      logger.info('inside a span');
      return Promise.resolve();
    });
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).to.include({ msg: 'inside a span' });
    expect(line).not.to.have.property('trace_id');
  });
});
