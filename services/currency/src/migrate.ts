import { runMigrations } from '@payments/service-kit';
import { migrations, privileges } from './data/migrations.js';

// As the owner role: the schema up to date, the runtime role granted its privileges (packages/service-kit).
runMigrations('currency', 'payments_currency', { migrations, privileges });
