import type { Viewer } from '../auth/viewer.js';
import type { PrismaClient } from '../db/client.js';

/**
 * Who performs a domain operation and the database it runs on: all that domain code reads of a request.
 * The request context satisfies it as it is, so resolvers pass theirs; work no request started (canary
 * analysis) makes its own. Anything else a function uses (the event bus, the blob store, a keyring) it
 * takes as a parameter of its own.
 */
export interface Actor {
  readonly viewer: Viewer;
  readonly prisma: PrismaClient;
  /** Stamped on audit rows and outbox events. */
  readonly requestId: string;
}
