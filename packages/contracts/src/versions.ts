export const API_VERSIONS = ['1.0', '1.1'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

export const CURRENT_VERSION: ApiVersion = '1.1';
export const MIN_SUPPORTED_VERSION: ApiVersion = '1.0';
/** The version served when a request names none (SPEC.md, Versioning). */
export const DEFAULT_VERSION: ApiVersion = '1.0';

export const VERSION_HEADER = 'x-api-version';

export function isApiVersion(value: string): value is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(value);
}

/** Whether `version` includes the features introduced in `feature`. */
export function versionAtLeast(version: ApiVersion, feature: ApiVersion): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const [fMajor, fMinor] = feature.split('.').map(Number) as [number, number];
  return major > fMajor || (major === fMajor && minor >= fMinor);
}

export function discoveryBody() {
  return {
    versions: [...API_VERSIONS],
    current_version: CURRENT_VERSION,
    min_supported_version: MIN_SUPPORTED_VERSION,
  };
}
