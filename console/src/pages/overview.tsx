import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function OverviewPage() {
  return (
    <>
      <PageHeading>Overview</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
