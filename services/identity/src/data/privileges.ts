import { outboxPrivileges, type RuntimePrivileges } from '@payments/service-kit';

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  ...outboxPrivileges,
  // Registered, changed (under a row lock), deleted.
  users: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Appended; the expired ones pruned.
  revocations: ['SELECT', 'INSERT', 'DELETE'],
  // The one row, read under a lock and replaced when identity starts with other keys.
  published_signing_keys: ['SELECT', 'UPDATE'],
  // Created, marked used and revoked; deleted only with their user (ON DELETE CASCADE).
  api_keys: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
};
