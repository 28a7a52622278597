import { pino, type DestinationStream, type Logger } from 'pino';
import { traceLogFields } from './tracing.js';

export type { Logger };

/** One root logger per service; request and event handlers log through children that carry their ids. */
export function createLogger(
  service: string,
  level: string = process.env.LOG_LEVEL ?? 'info',
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    base: { service },
    // Every line written inside a span names its trace, so one deposit's lines are found across services.
    mixin: traceLogFields,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["provider-signature"]',
        'req.headers["stripe-signature"]',
        'req.headers["x-webhook-signature"]',
        '*.password',
        'password',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
