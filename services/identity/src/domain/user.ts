import type { Role } from '@payments/service-kit';

export type UserStatus = 'active' | 'disabled' | 'locked';

export const USER_STATUSES: readonly UserStatus[] = ['active', 'disabled', 'locked'];

export interface User {
  id: string;
  username: string;
  /** Always lower-case: e-mail addresses are compared case-insensitively. */
  email: string;
  role: Role;
  status: UserStatus;
  /** Bumped on every change; the ETag. */
  version: number;
  /** Unix seconds: tokens issued before this were revoked (password change, disable, delete). */
  tokensValidFrom: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface UserWithCredentials extends User {
  passwordHash: string;
}

/** What the API shows of a user: never the password or its hash. */
export interface UserView {
  id: string;
  username: string;
  email: string;
  role: Role;
  status: UserStatus;
  created_at: string;
  updated_at: string;
}

export function toUserView(user: User): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    role: user.role,
    status: user.status,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Usernames are unique regardless of case, so "Alice" cannot impersonate "alice". */
export function usernameKey(username: string): string {
  return username.toLowerCase();
}

export function isActive(user: Pick<User, 'status'>): boolean {
  return user.status === 'active';
}

/**
 * Where a user-wide revocation made at `now` (unix seconds, read under the user's row lock) moves
 * `tokensValidFrom`: past every token issued before it, whose `iat` is at most max(now, tokensValidFrom), even when
 * an earlier revocation in the same second already moved it ahead of the clock.
 */
export function nextTokensValidFrom(user: Pick<User, 'tokensValidFrom'>, now: number): number {
  return Math.max(now, user.tokensValidFrom) + 1;
}

export function canRead(actor: Pick<User, 'id' | 'role'>, userId: string): boolean {
  return actor.id === userId || actor.role === 'admin';
}

export function canDelete(actor: Pick<User, 'id' | 'role'>, userId: string): boolean {
  return actor.id === userId || actor.role === 'admin';
}

/** Only the user changes their own credentials; an admin manages status through its own endpoint. */
export function canChange(actor: Pick<User, 'id'>, userId: string): boolean {
  return actor.id === userId;
}

export function etagOf(user: Pick<User, 'version'>): string {
  return `"v${user.version}"`;
}

/**
 * Reads an If-Match header: undefined when absent or `*` (no precondition), else the versions it names
 * (empty when it names none of ours, which can never match).
 */
export function versionsFromIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  return header
    .split(',')
    .map((tag) => /^(?:W\/)?"v(\d{1,9})"$/.exec(tag.trim())?.[1])
    .filter((version): version is string => version !== undefined)
    .map(Number);
}
