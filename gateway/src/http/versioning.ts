import type { RequestHandler } from 'express';
import { API_VERSIONS, VERSION_HEADER, type ApiVersion } from '@payments/contracts';
import { AppError } from '@payments/service-kit';
import {
  resolveApiVersion,
  SUPPORTED_VERSIONS_TEXT,
  VERSION_LIFECYCLE,
  type VersionLifecycle,
} from '../domain/api-version.js';

const SOURCE_FIELD = { path: 'path', accept: 'Accept', header: 'X-API-Version' } as const;

/**
 * Resolves the API version, strips a `/v1.x` prefix (keeping it in `X-Forwarded-Prefix` so services and problem
 * `instance`s still name the path the client used), forwards the version to services and echoes it to the client.
 */
export function versioning(
  lifecycle: Partial<Record<ApiVersion, VersionLifecycle>> = VERSION_LIFECYCLE,
): RequestHandler {
  return (req, res, next) => {
    const [path = '/', query] = splitUrl(req.url);
    const resolution = resolveApiVersion({
      path,
      accept: req.get('accept'),
      versionHeader: req.get(VERSION_HEADER),
    });
    delete req.headers['x-forwarded-prefix'];
    if (!resolution.ok) {
      const field = SOURCE_FIELD[resolution.source];
      return next(
        new AppError(
          'VALIDATION_ERROR',
          `Unsupported API version "${resolution.given}" in ${field}. Supported versions: ${SUPPORTED_VERSIONS_TEXT}`,
          [{ field, message: `must be one of ${API_VERSIONS.join(', ')}` }],
        ),
      );
    }
    if (resolution.prefix) {
      req.url = query === undefined ? resolution.path : `${resolution.path}?${query}`;
      req.originalUrl = req.url;
      req.headers['x-forwarded-prefix'] = resolution.prefix;
      res.locals.versionPrefix = resolution.prefix;
    }
    req.headers[VERSION_HEADER] = resolution.version;
    res.set('X-API-Version', resolution.version);
    res.vary('Accept').vary('X-API-Version');
    const retiring = lifecycle[resolution.version];
    if (retiring) {
      res.set('Deprecation', `@${Math.floor(retiring.deprecatedAt.getTime() / 1000)}`);
      res.set('Sunset', retiring.sunsetAt.toUTCString());
    }
    next();
  };
}

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}
