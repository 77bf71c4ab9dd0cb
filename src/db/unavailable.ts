/**
 * Failures that say "the database cannot serve this now" rather than "this request is wrong": the pool
 * and its queue are full, a connection could not be had or was lost, a statement ran out of time, the
 * disk is full. Requests that meet one answer 503 with Retry-After (SERVICE_UNAVAILABLE) instead of 500.
 */

/** Thrown when every connection is busy and the queue in front of the pool is full. */
export class DatabaseOverloadedError extends Error {
  override name = 'DatabaseOverloadedError';
  readonly code = 'DATABASE_OVERLOADED';
  constructor(queueSize: number) {
    super(`database overloaded: every connection is busy and ${queueSize} requests already wait`);
  }
}

// P1001 can't reach, P1002 timed out reaching, P1008 operation timed out, P1017 connection closed,
// P2024 timed out fetching a connection, P2028 transaction API error (could not start in time, expired).
const prismaCodes = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
// Class 08 connection exception; 53 insufficient resources (53100 disk full, 53200 out of memory, 53300
// too many connections); 57014 query_canceled (statement_timeout); 57P01-57P03 shutting down or starting.
const sqlStates = /^(08...|53...|57014|57P0[123])$/;
// Driver adapter error kinds (Prisma's adapters) for a lost or unreachable server.
const adapterKinds = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TransactionAlreadyClosed',
]);
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOSPC', 'EHOSTUNREACH']);
// pg and pg-pool raise plain Errors for these.
const messages =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection is not open|No space left on device|could not (extend|write to) file/i;

const stateCause = (state: string) => (state === '53100' ? 'disk full' : state);

/** What makes a failure one of the database being unavailable, or undefined when it is not one. */
export function databaseUnavailableCause(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== 'object' || depth > 8) return undefined;
  const candidate = error as {
    code?: unknown;
    kind?: unknown;
    message?: unknown;
    cause?: unknown;
    originalError?: unknown;
    meta?: { driverAdapterError?: unknown; code?: unknown };
  };
  const code = typeof candidate.code === 'string' ? candidate.code : undefined;
  // Prisma rethrows a driver error it does not know as its own error, keeping the driver error's code.
  if (error instanceof DatabaseOverloadedError || code === 'DATABASE_OVERLOADED') return 'overloaded';
  if (code && prismaCodes.has(code)) return code;
  if (code && sqlStates.test(code)) return stateCause(code);
  if (code && socketCodes.has(code)) return code === 'ENOSPC' ? 'disk full' : code;
  // PGlite's file system layer (Emscripten) throws ErrnoError; 51 is ENOSPC there.
  if ((error as { name?: unknown }).name === 'ErrnoError' && (error as { errno?: unknown }).errno === 51) {
    return 'disk full';
  }
  if (typeof candidate.kind === 'string') {
    if (adapterKinds.has(candidate.kind)) return candidate.kind;
    if (candidate.kind === 'postgres') {
      const state = (candidate as { code?: unknown }).code;
      if (typeof state === 'string' && sqlStates.test(state)) return stateCause(state);
    }
  }
  const meta = candidate.meta;
  if (meta && typeof meta.code === 'string' && sqlStates.test(meta.code)) return stateCause(meta.code);
  if (typeof candidate.message === 'string' && messages.test(candidate.message)) {
    return /space|extend|write to/i.test(candidate.message) ? 'disk full' : 'connection lost';
  }
  return (
    databaseUnavailableCause(candidate.originalError, depth + 1) ??
    databaseUnavailableCause(meta?.driverAdapterError, depth + 1) ??
    databaseUnavailableCause(candidate.cause, depth + 1)
  );
}
