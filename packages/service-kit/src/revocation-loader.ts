import { compileSchema, TokenRevokedData } from '@payments/contracts';
import type { RevocationList } from './auth.js';
import type { Logger } from './logger.js';
import { serviceAuthorization } from './service-credential.js';

const checkRevocation = compileSchema(TokenRevokedData);

/**
 * Revocations made before this process started, from identity's internal endpoint (`{ data: [...] }` or a bare
 * array of TokenRevoked data). Best effort: identity may not be up yet, and events cover what follows.
 */
export async function loadRevocations(
  identityUrl: string,
  revocations: RevocationList,
  logger: Logger,
  serviceToken: string,
): Promise<number> {
  try {
    const response = await fetch(new URL('/internal/revocations', identityUrl), {
      headers: serviceAuthorization(serviceToken),
      signal: AbortSignal.timeout(2000),
    });
    if (!response.ok) throw new Error(`identity answered ${response.status}`);
    const body = (await response.json()) as unknown;
    const items = Array.isArray(body) ? body : ((body as { data?: unknown } | null)?.data ?? []);
    let loaded = 0;
    for (const item of Array.isArray(items) ? items : []) {
      const checked = checkRevocation(item);
      if (!checked.ok) continue;
      revocations.add(checked.value);
      loaded += 1;
    }
    return loaded;
  } catch (error) {
    logger.info({ err: error }, 'no revocations loaded at start');
    return 0;
  }
}
