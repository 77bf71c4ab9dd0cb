import type { IsolationLevel, SqlQuery, TransactionOptions } from '@prisma/driver-adapter-utils';

/**
 * The messages between the gateway's thread and the thread that runs PGlite (src/db/pglite-worker.ts).
 * Types only: the worker imports nothing of the gateway at run time.
 */

/** What the worker is started with (`workerData`). */
export interface PGliteWorkerData {
  /** PGlite's directory, or `memory://`. */
  dataDir: string;
  /** Start parameters added to PGlite's defaults. */
  startParams: string[];
  /**
   * `memory://` only: the data directory to start from, as `dumpDataDir` returned it (a tar archive),
   * instead of running initdb. The tests start each database from one migrated this way.
   */
  loadDataDir?: Uint8Array | undefined;
}

/** A request; `tx` names a transaction opened by `startTransaction`, otherwise the connection is used. */
export type Request =
  | { op: 'queryRaw' | 'executeRaw'; query: SqlQuery; tx?: number | undefined }
  | { op: 'executeScript'; script: string }
  | { op: 'startTransaction'; isolationLevel?: IsolationLevel | undefined }
  | { op: 'commit' | 'rollback'; tx: number }
  | { op: 'rows'; sql: string }
  | { op: 'listen' | 'unlisten'; channel: string }
  | { op: 'dumpDataDir' }
  | { op: 'close' };

export type Call = Request & { id: number };

/** An error as it crosses the threads: enough to rebuild a DriverAdapterError or a driver's error. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string | undefined;
  /** Own properties with cloneable values (code, errno, severity, detail, and a DriverAdapterError's cause). */
  props: Record<string, unknown>;
}

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

/** Messages the worker sends without being asked. */
export type Event =
  | { event: 'ready' }
  | { event: 'failed'; error: SerializedError }
  | { event: 'notify'; channel: string };

export type StartedTransaction = { tx: number; options: TransactionOptions };
