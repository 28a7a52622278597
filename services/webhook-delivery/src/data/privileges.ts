import { inboxPrivileges, type RuntimePrivileges } from '@payments/service-kit';

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  ...inboxPrivileges,
  // Created, changed and deleted by their owners; a removed user's go with them.
  webhook_endpoints: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Fanned out, claimed under a lease, ended; the old ones pruned (their attempts go with them).
  webhook_deliveries: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // One per user event, rendered once, pruned after 30 days or with their user.
  webhook_events: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Appended, one per attempt.
  webhook_delivery_attempts: ['SELECT', 'INSERT'],
  // One row per drill started, for its limits; those older than a day pruned.
  webhook_drills: ['SELECT', 'INSERT', 'DELETE'],
};
