import { inboxPrivileges, type RuntimePrivileges } from '@payments/service-kit';

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  ...inboxPrivileges,
  // Counts by currency; a removed user's accounts are forgotten.
  account_counts: ['SELECT', 'INSERT', 'DELETE'],
};
