/** Exit codes, documented in cli/README.md; scripts branch on them. */
export const EXIT = {
  ok: 0,
  /** The command ran but its transaction failed or was canceled. */
  transactionFailed: 1,
  /** Bad arguments or input the API rejected as invalid (400). */
  usage: 2,
  /** Not logged in, session expired or revoked, wrong credentials, or not allowed (401, 403). */
  auth: 3,
  notFound: 4,
  /** A business rule said no: insufficient funds, wrong currency, duplicate, conflict (409, 422). */
  businessRule: 5,
  /** The API is unreachable, failing or rate limiting (5xx, 429, network errors). */
  unavailable: 6,
  /** Waiting for a transaction took longer than --timeout; it may still complete. */
  timeout: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the user should read: a message, optional detail lines, and the exit code that classifies it. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly details: string[] = [],
    /** The API's problem body, printed as is with --json. */
    readonly problem?: unknown,
  ) {
    super(message);
  }
}

export const usageError = (message: string, details: string[] = []) =>
  new CliError(EXIT.usage, message, details);
