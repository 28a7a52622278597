import { randomBytes } from 'node:crypto';
import type { ApiVersion, WebhookEventType } from '@payments/contracts';

export interface WebhookEndpoint {
  id: string;
  userId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  enabled: boolean;
  apiVersion: ApiVersion;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Viewer {
  userId: string;
  role: 'user' | 'admin';
}

/** A user manages their own endpoints; an admin everyone's. */
export function canManage(viewer: Viewer, endpoint: Pick<WebhookEndpoint, 'userId'>): boolean {
  return viewer.role === 'admin' || endpoint.userId === viewer.userId;
}

/** `whsec_` and 32 random bytes, like the secrets Stripe hands out. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The secrets a delivery is signed with now: the current one, and the previous one during its grace period. */
export function signingSecrets(
  endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  now = new Date(),
): string[] {
  const previousValid =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}
