import { runMigrations } from '@payments/service-kit';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';

// As the owner role: the schema up to date, the runtime role granted its privileges (packages/service-kit).
runMigrations('identity', 'payments_identity', { migrations, privileges });
