import { compileSchema, TokenRevokedData } from '@payments/contracts';
import type { Consumer, EventBus, Logger, RevocationList } from '@payments/service-kit';

const checkRevocation = compileSchema(TokenRevokedData);

/** Every gateway process hears every revocation, so a logged-out token is refused everywhere at once. */
export function followRevocations(bus: EventBus, revocations: RevocationList): Promise<Consumer> {
  return bus.broadcast('revocations', {
    TokenRevoked: async (event) => revocations.add(event.data),
  });
}

/**
 * Revocations made before this process started, from identity's internal endpoint (`{ data: [...] }` or a bare
 * array of TokenRevoked data). Best effort: identity may not be up yet, and events cover what follows.
 */
export async function loadRevocations(
  identityUrl: string,
  revocations: RevocationList,
  logger: Logger,
): Promise<number> {
  try {
    const response = await fetch(new URL('/internal/revocations', identityUrl), {
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
