import { randomUUID } from 'node:crypto';
import type { IdentityStore } from '../data/identity-store.js';
import { signingKeysChangedEvent } from '../events/identity-events.js';

export interface SigningKeyAnnouncementDeps {
  store: IdentityStore;
  /** Asks the outbox relay to publish now rather than at its next poll. */
  wake: () => void;
}

/**
 * Announces SigningKeysChanged when the key ids this process serves differ from the last ones announced, so every
 * verifier fetches the JWKS at once instead of when its copy is old: a key removed (rotated out, or leaked) stops
 * verifying everywhere. Called once the process answers, so the fetch it causes can find the new set. True when
 * it announced.
 */
export async function announceSigningKeys(
  deps: SigningKeyAnnouncementDeps,
  kids: string[],
): Promise<boolean> {
  const served = [...kids].sort();
  const announced = await deps.store.transaction(async (tx) => {
    const published = [...(await tx.signingKeys.lockPublished())].sort();
    if (published.length === served.length && published.every((kid, i) => kid === served[i])) return false;
    await tx.signingKeys.recordPublished(served);
    await tx.enqueueEvents([signingKeysChangedEvent(served, `signing-keys:${randomUUID()}`)]);
    return true;
  });
  if (announced) deps.wake();
  return announced;
}
