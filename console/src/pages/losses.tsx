import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function LossesPage() {
  return (
    <>
      <PageHeading>Losses</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
