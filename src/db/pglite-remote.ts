import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  DriverAdapterError,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from '@prisma/driver-adapter-utils';
import type {
  Event,
  PGliteWorkerData,
  Reply,
  Request,
  SerializedError,
  StartedTransaction,
} from './pglite-protocol.js';

/**
 * The embedded database as the gateway's thread sees it: PGlite runs in a worker thread
 * (src/db/pglite-worker.ts) and every statement goes there as a message, so the event loop stays free
 * while PostgreSQL works. Prisma talks to it through a driver adapter that forwards each call; the
 * migration session, LISTEN and close go through the same thread. See
 * docs/decisions/0002-pglite-worker-thread.md ("PGlite in a worker thread").
 */
export interface PGliteWorker {
  /** Prisma's driver adapter: every call runs on the worker's PGlite adapter. */
  adapter: SqlMigrationAwareDriverAdapterFactory;
  /** Runs SQL without parameters and returns its rows (the migration session's statements). */
  rows<Row>(sql: string): Promise<Row[]>;
  /** Calls `onWake` for every notification on `channel`; resolves with a function that stops it. */
  listen(channel: string, onWake: () => void): Promise<() => Promise<void>>;
  /**
   * Settles when the worker ended without being closed (a crash of PostgreSQL's WebAssembly, an out of
   * memory): from then on every call, including those under way, fails as ConnectionClosed (503).
   */
  lost: Promise<Error>;
  /** The whole data directory as a tar archive, for `loadDataDir` (PGliteWorkerData). */
  dumpDataDir(): Promise<Uint8Array>;
  /** Closes PGlite (a checkpoint on disk) and ends the thread. */
  close(): Promise<void>;
  /** The thread itself (its id and resource use in tests). */
  worker: Worker;
}

/**
 * The worker: dist/pglite-worker.js next to the bundle that imports this module; from the sources
 * (development, tests) the TypeScript file through tsx's CommonJS hook, since Node 20 applies no ES module
 * loader hooks to a worker thread.
 */
function spawnWorker(workerData: PGliteWorkerData): Worker {
  const built = new URL('./pglite-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return new Worker(built, { workerData });
  const require = createRequire(import.meta.url);
  const source = fileURLToPath(new URL('./pglite-worker.ts', import.meta.url));
  const bootstrap = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();
require(${JSON.stringify(source)});`;
  return new Worker(bootstrap, { eval: true, workerData });
}

function rebuildError({ name, message, stack, props }: SerializedError): Error {
  const cause = props.cause;
  const error =
    name === 'DriverAdapterError' && cause && typeof cause === 'object'
      ? new DriverAdapterError(cause as DriverAdapterError['cause'])
      : Object.assign(new Error(message), props);
  error.name = name;
  if (stack) error.stack = stack;
  return error;
}

/** What every call meets once the worker is gone: Prisma reports it as P1017, the gateway answers 503. */
const connectionClosed = () =>
  new DriverAdapterError({ kind: 'ConnectionClosed' } as DriverAdapterError['cause']);

/** Starts the worker and PGlite in it; rejects with PGlite's own error when it cannot start. */
export async function startPGliteWorker(data: PGliteWorkerData): Promise<PGliteWorker> {
  const worker = spawnWorker(data);
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const listeners = new Map<string, Set<() => void>>();
  let nextId = 1;
  let ready = false;
  let closing = false;
  let gone: Error | undefined;
  let markLost: (error: Error) => void = () => {};
  const lost = new Promise<Error>((resolve) => {
    markLost = resolve;
  });

  const started = new Promise<void>((resolve, reject) => {
    const end = (error: Error) => {
      if (gone) return;
      gone = error;
      for (const call of pending.values()) call.reject(connectionClosed());
      pending.clear();
      reject(error);
      if (ready && !closing) markLost(error);
    };
    worker.on('message', (message: Reply | Event) => {
      if ('event' in message) {
        if (message.event === 'ready') {
          ready = true;
          resolve();
        } else if (message.event === 'failed') reject(rebuildError(message.error));
        else for (const onWake of listeners.get(message.channel) ?? []) onWake();
        return;
      }
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(rebuildError(message.error));
    });
    worker.on('error', (error) => end(error));
    worker.on('exit', (code) => end(new Error(`the PGlite worker exited with code ${code}`)));
  });
  try {
    await started;
  } catch (error) {
    closing = true;
    await worker.terminate();
    throw error;
  }

  const call = <T>(request: Request): Promise<T> => {
    if (gone) return Promise.reject(connectionClosed());
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...request, id });
    });
  };

  const queryable = (tx?: number) => ({
    provider: 'postgres' as const,
    adapterName: 'pglite-prisma-adapter',
    queryRaw: (query: SqlQuery) => call<SqlResultSet>({ op: 'queryRaw', query, tx }),
    executeRaw: (query: SqlQuery) => call<number>({ op: 'executeRaw', query, tx }),
  });
  // A fresh object per connection: the migration run wraps its executeScript (src/db/migrate.ts).
  const connect = async (): Promise<SqlDriverAdapter> => ({
    ...queryable(),
    executeScript: (script) => call<void>({ op: 'executeScript', script }),
    async startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
      const { tx, options } = await call<StartedTransaction>({ op: 'startTransaction', isolationLevel });
      return {
        ...queryable(tx),
        options,
        commit: () => call<void>({ op: 'commit', tx }),
        rollback: () => call<void>({ op: 'rollback', tx }),
      };
    },
    getConnectionInfo: () => ({ supportsRelationJoins: true }),
    dispose: async () => {},
  });

  return {
    worker,
    lost,
    adapter: {
      provider: 'postgres',
      adapterName: 'pglite-prisma-adapter',
      connect,
      connectToShadowDb: () =>
        Promise.reject(new Error('no shadow database here; scripts/new-migration.ts opens its own')),
    },
    rows: (sql) => call({ op: 'rows', sql }),
    dumpDataDir: () => call<Uint8Array>({ op: 'dumpDataDir' }),
    async listen(channel, onWake) {
      let channelListeners = listeners.get(channel);
      if (!channelListeners) {
        channelListeners = new Set();
        listeners.set(channel, channelListeners);
        await call({ op: 'listen', channel });
      }
      channelListeners.add(onWake);
      return async () => {
        channelListeners.delete(onWake);
        if (channelListeners.size > 0 || listeners.get(channel) !== channelListeners) return;
        listeners.delete(channel);
        await call({ op: 'unlisten', channel }).catch(() => {});
      };
    },
    async close() {
      if (gone) return;
      await call({ op: 'close' });
      closing = true;
      await worker.terminate();
    },
  };
}
