import { API_VERSIONS, DEFAULT_VERSION, isApiVersion, type ApiVersion } from '@payments/contracts';

export type VersionSource = 'path' | 'accept' | 'header' | 'default';

export interface VersionRequest {
  path: string;
  accept?: string | undefined;
  versionHeader?: string | undefined;
}

export type VersionResolution =
  | {
      ok: true;
      version: ApiVersion;
      source: VersionSource;
      /** `/v1.1` when the version came from the path, which is then `path` without it. */
      prefix: string | null;
      path: string;
    }
  | { ok: false; source: Exclude<VersionSource, 'default'>; given: string };

/** A path segment that is trying to be a version: `v` and a digit (`/v1.1`, `/v2.0`, `/v1`). */
const PATH_PREFIX = /^\/(v\d[^/]*)(?=\/|$)/;
const VENDOR_MEDIA_TYPE = /application\/vnd\.service\.([^\s,;+]+)\+json/i;
const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

function normalise(text: string, requireV: boolean): ApiVersion | null {
  const lower = text.trim().toLowerCase();
  if (requireV && !lower.startsWith('v')) return null;
  const bare = lower.replace(/^v/, '');
  if (!VERSION.test(bare)) return null;
  return isApiVersion(bare) ? bare : null;
}

/**
 * The version a request asks for: path prefix, else the vendor media type in Accept, else X-API-Version, else the
 * default. The first source present decides; later sources are not consulted, so they cannot contradict it.
 */
export function resolveApiVersion(request: VersionRequest): VersionResolution {
  const prefixed = PATH_PREFIX.exec(request.path);
  if (prefixed) {
    const given = prefixed[1] as string;
    const version = normalise(given, true);
    if (!version) return { ok: false, source: 'path', given };
    const rest = request.path.slice(given.length + 1);
    return { ok: true, version, source: 'path', prefix: `/${given}`, path: rest || '/' };
  }
  const vendor = request.accept ? VENDOR_MEDIA_TYPE.exec(request.accept) : null;
  if (vendor) {
    const given = vendor[1] as string;
    const version = normalise(given, true);
    if (!version) return { ok: false, source: 'accept', given };
    return { ok: true, version, source: 'accept', prefix: null, path: request.path };
  }
  const header = request.versionHeader?.trim();
  if (header) {
    const version = normalise(header, false);
    if (!version) return { ok: false, source: 'header', given: header };
    return { ok: true, version, source: 'header', prefix: null, path: request.path };
  }
  return { ok: true, version: DEFAULT_VERSION, source: 'default', prefix: null, path: request.path };
}

export const SUPPORTED_VERSIONS_TEXT = API_VERSIONS.join(', ');

/** When a major version is on its way out: both served as headers with every response in that version. */
export interface VersionLifecycle {
  deprecatedAt: Date;
  sunsetAt: Date;
}

/** Versions being retired; empty while every version is current. A new major adds its predecessors here. */
export const VERSION_LIFECYCLE: Partial<Record<ApiVersion, VersionLifecycle>> = {};
