import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ConfigError, splitList } from './config.js';
import { AppError } from './errors.js';
import type { Logger } from './logger.js';

/**
 * One secret per deployment that services show each other (and operators, and Prometheus) on `/internal/*` and
 * `/metrics`: `Authorization: Bearer <SERVICE_TOKEN>`. Several comma-separated values are all accepted and the
 * first is sent, so a rotation adds the new token everywhere before removing the old one.
 */
export interface ServiceCredential {
  /** What this process sends to other services. */
  token: string;
  /** What this process accepts. */
  accepted: readonly string[];
  /** True when SERVICE_TOKEN was unset and the public development value stands in. */
  development: boolean;
}

/** Stands in for SERVICE_TOKEN outside production, so a service started alone still works. Never valid in production. */
export const DEVELOPMENT_SERVICE_TOKEN = 'svc_development_only_do_not_use_in_production';

const MIN_PRODUCTION_LENGTH = 32;

/** SERVICE_TOKEN, or the development value outside production; production refuses to start without a real one. */
export function resolveServiceCredential(config: {
  NODE_ENV: string;
  SERVICE_TOKEN?: string;
}): ServiceCredential {
  const configured = splitList(config.SERVICE_TOKEN);
  if (config.NODE_ENV === 'production') {
    if (configured.length === 0) {
      throw new ConfigError('Invalid configuration: SERVICE_TOKEN is required when NODE_ENV=production');
    }
    if (configured.includes(DEVELOPMENT_SERVICE_TOKEN)) {
      throw new ConfigError('Invalid configuration: SERVICE_TOKEN must not contain the development token');
    }
    if (configured.some((token) => token.length < MIN_PRODUCTION_LENGTH)) {
      throw new ConfigError(
        `Invalid configuration: every SERVICE_TOKEN must be at least ${MIN_PRODUCTION_LENGTH} characters (e.g. openssl rand -hex 32)`,
      );
    }
  }
  if (configured.length === 0) {
    return { token: DEVELOPMENT_SERVICE_TOKEN, accepted: [DEVELOPMENT_SERVICE_TOKEN], development: true };
  }
  return { token: configured[0] as string, accepted: configured, development: false };
}

/** The header that carries the credential on a call to another service. */
export function serviceAuthorization(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Refuses any request without the service credential with one 401 that says nothing more. Digests are compared,
 * so the comparison takes the same time whatever the length or content of the guess.
 */
export function requireServiceCredential(credential: ServiceCredential): RequestHandler {
  const accepted = credential.accepted.map(digest);
  return (req, _res, next) => {
    const presented = /^Bearer (\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    let matched = false;
    if (presented !== undefined) {
      const candidate = digest(presented);
      for (const expected of accepted) matched = timingSafeEqual(candidate, expected) || matched;
    }
    if (matched) return next();
    next(
      new AppError('AUTH_REQUIRED', 'This endpoint needs the service credential', undefined, {
        'WWW-Authenticate': 'Bearer realm="service"',
      }),
    );
  };
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\]|::ffff:127(\.\d{1,3}){3})$/i;

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.test(host.trim());
}

/**
 * Public development secrets are fine on a machine's loopback and nowhere else. `inUse` names each secret this
 * process would run with a development value for; any of them with a HOST beyond loopback stops the start.
 */
export function refuseDevelopmentSecrets(host: string, inUse: Record<string, boolean>, logger: Logger): void {
  const names = Object.keys(inUse).filter((name) => inUse[name]);
  if (names.length === 0) return;
  if (!isLoopbackHost(host)) {
    throw new ConfigError(
      `Refusing to start: HOST=${host} listens beyond loopback, but ${names.join(', ')} ` +
        `${names.length === 1 ? 'has its' : 'have their'} public development value. ` +
        'Set real secrets (docs/security.md), or listen on 127.0.0.1.',
    );
  }
  logger.warn(
    { development_secrets: names },
    'running with public DEVELOPMENT secrets: fine on this machine, refused beyond loopback',
  );
}

/**
 * The service credential, with every development secret in use (the service token's, and the service's `others`)
 * refused beyond loopback and warned about on it.
 */
export function checkedServiceCredential(
  config: { HOST: string; NODE_ENV: string; SERVICE_TOKEN?: string },
  logger: Logger,
  others: Record<string, boolean> = {},
): ServiceCredential {
  const credential = resolveServiceCredential(config);
  refuseDevelopmentSecrets(config.HOST, { SERVICE_TOKEN: credential.development, ...others }, logger);
  return credential;
}
