import type { Role } from '@payments/contracts';

/** Who asks: a user, for their own resources, or an admin, who may read anyone's (on the record). */
export interface Viewer {
  userId: string;
  role: Role;
}
