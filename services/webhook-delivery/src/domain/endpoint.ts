import { randomBytes } from 'node:crypto';
import type { ApiVersion, WebhookEventType } from '@payments/contracts';

/**
 * An endpoint's signing secrets, opened; or why they cannot be (sealed under a key that is no longer configured).
 * The previous secret is there only while it still signs (its grace period).
 */
export type EndpointSecrets =
  { open: true; secret: string; previousSecret: string | null } | { open: false; problem: string };

export interface WebhookEndpoint {
  id: string;
  userId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  enabled: boolean;
  apiVersion: ApiVersion;
  secrets: EndpointSecrets;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Viewer {
  userId: string;
  role: 'user' | 'admin';
}

/** How a viewer stands to an endpoint: its owner, an admin acting on another user's, or a stranger to it. */
export type EndpointAccess = 'owner' | 'admin' | 'none';

export function accessTo(viewer: Viewer, endpoint: Pick<WebhookEndpoint, 'userId'>): EndpointAccess {
  if (endpoint.userId === viewer.userId) return 'owner';
  return viewer.role === 'admin' ? 'admin' : 'none';
}

/**
 * What an admin may change of another user's endpoint: whether it is on. Where its events go, which ones, how
 * they are rendered and its description stay its owner's; its secret is never an admin's to see or choose.
 */
const ADMIN_CHANGES: ReadonlySet<string> = new Set(['enabled']);

/** The fields of an update an admin may not make to another user's endpoint. */
export function refusedToAdmin(changes: Record<string, unknown>): string[] {
  return Object.keys(changes).filter((field) => changes[field] !== undefined && !ADMIN_CHANGES.has(field));
}

/** `whsec_` and 32 random bytes, like the secrets Stripe hands out. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** Whether the previous secret still signs beside the current one. */
export function isInGracePeriod(previousSecretExpiresAt: Date | null, now = new Date()): boolean {
  return previousSecretExpiresAt !== null && previousSecretExpiresAt.getTime() > now.getTime();
}

/** The secrets a delivery is signed with now: the current one, and the previous one during its grace period. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  now = new Date(),
): string[] {
  return endpoint.previousSecret !== null && isInGracePeriod(endpoint.previousSecretExpiresAt, now)
    ? [endpoint.secret, endpoint.previousSecret]
    : [endpoint.secret];
}
