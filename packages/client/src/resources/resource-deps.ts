import type { Transport } from '../http-transport.js';
import type { TokenSession } from '../token-session.js';

/** What every resource is built from: the one request pipeline, and the session when the client keeps one. */
export interface ResourceDeps {
  transport: Transport;
  session: TokenSession | null;
  now: () => number;
}
