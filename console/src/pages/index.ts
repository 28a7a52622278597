import type { ComponentType } from 'react';
import { AuditTrailPage } from './audit-trail.js';
import { DeadLettersPage } from './dead-letters.js';
import { LossesPage } from './losses.js';
import { OverviewPage } from './overview.js';
import { ReconciliationPage } from './reconciliation.js';
import { TransactionsPage } from './transactions.js';
import { UsersPage } from './users.js';
import { WebhooksPage } from './webhooks.js';

export interface PageProps {
  /** The route's rest below the page's own path, e.g. `/cases/<id>` under /reconciliation; '' for the page. */
  subpath: string;
}

export interface ConsolePage {
  /** The nav link's name and the page's h1. */
  name: string;
  /** Below /console. */
  path: string;
  component: ComponentType<PageProps>;
}

/** The pages in the order the nav lists them. */
export const PAGES: readonly ConsolePage[] = [
  { name: 'Overview', path: '/overview', component: OverviewPage },
  { name: 'Users', path: '/users', component: UsersPage },
  { name: 'Transactions', path: '/transactions', component: TransactionsPage },
  { name: 'Reconciliation', path: '/reconciliation', component: ReconciliationPage },
  { name: 'Losses', path: '/losses', component: LossesPage },
  { name: 'Dead letters', path: '/dead-letters', component: DeadLettersPage },
  { name: 'Webhooks', path: '/webhooks', component: WebhooksPage },
  { name: 'Audit trail', path: '/audit-trail', component: AuditTrailPage },
];

/** The page a route shows and the rest of the route below it; the Overview for the console's own path. */
export function pageOf(route: string): { page: ConsolePage; subpath: string } | null {
  if (route === '/') return { page: PAGES[0] as ConsolePage, subpath: '' };
  for (const page of PAGES) {
    if (route === page.path) return { page, subpath: '' };
    if (route.startsWith(`${page.path}/`)) return { page, subpath: route.slice(page.path.length) };
  }
  return null;
}
