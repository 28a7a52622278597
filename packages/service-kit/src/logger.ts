import { pino, type DestinationStream, type Logger } from 'pino';

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
