import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function WebhooksPage() {
  return (
    <>
      <PageHeading>Webhooks</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
