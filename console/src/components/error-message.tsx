import { ApiError } from '@payments/client';

/** What went wrong, in the API's own words (problem+json title and detail) with the request id to quote. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const id = error.requestId ? ` (request ${error.requestId})` : '';
    return `${error.message}${id}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="error">
      {describeError(error)}
    </p>
  );
}
