import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function TransactionsPage() {
  return (
    <>
      <PageHeading>Transactions</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
