import { PageHeading } from '../components/page-heading.js';

/** A placeholder: this page is coming. */
export function UsersPage() {
  return (
    <>
      <PageHeading>Users</PageHeading>
      <p>This page is coming.</p>
    </>
  );
}
