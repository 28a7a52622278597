import type { RuntimePrivileges } from '@payments/service-kit';

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  // Recorded once, marked published; deleted past their retention.
  webhook_events: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
};
