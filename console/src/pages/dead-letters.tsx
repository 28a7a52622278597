import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function DeadLettersPage() {
  return (
    <>
      <PageHeading>Dead letters</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
