import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function ReconciliationPage() {
  return (
    <>
      <PageHeading>Reconciliation</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
