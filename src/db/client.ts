import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PrismaPg as PrismaPgAdapter } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type pg from 'pg';
import { DATABASE_DEFAULTS, type DatabaseLimits } from '../config.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { dataDirErrorOf } from './data-dir.js';
import { type DataDirLock, type LockOptions, lockDataDir } from './data-dir-lock.js';
import { applyMigrations, type MigrateOptions, type MigrationSession, pendingMigrations } from './migrate.js';
import type { PGliteWorker } from './pglite-remote.js';
import { DatabaseOverloadedError } from './unavailable.js';

export type { PrismaClient };
export type DatabaseKind = 'pglite' | 'postgresql';

/** Connection figures of the PostgreSQL pool (metrics); PGlite has a single in-process connection. */
export interface PoolFigures {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface Database {
  kind: DatabaseKind;
  prisma: PrismaClient;
  /** PostgreSQL only: the pool's current figures. */
  pool?: () => PoolFigures;
  /** PGlite only: the whole data directory as a tar archive, for `loadDataDir` (DatabaseOptions). */
  dumpDataDir?: () => Promise<Uint8Array>;
  /** Applies pending migrations, each in its own transaction; returns the names applied. */
  migrate(options?: MigrateOptions): Promise<string[]>;
  /** True when the database answers within `timeoutMs` and no migration is pending. */
  ready(timeoutMs?: number): Promise<boolean>;
  /**
   * Calls `onWake` for every notification on `channel` (LISTEN), once when listening starts, and once more
   * whenever it starts again after the connection was lost, since notifications sent meanwhile are gone.
   * Resolves with a function that stops listening.
   */
  listen(channel: string, onWake: () => void): Promise<() => Promise<void>>;
  /**
   * PGlite only: settles when the thread that runs PGlite ended without being closed (every database call
   * fails from then on, answered 503), or when another process took DATA_DIR's lock over. The process
   * should exit so that its supervisor restarts it.
   */
  lost?: Promise<Error>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; `memory://` keeps nothing. */
  dataDir: string;
  /** PostgreSQL: pool size, queue and timeouts. Default: DATABASE_DEFAULTS (src/config.ts). */
  limits?: DatabaseLimits | undefined;
  /** PGlite: called when the start waits for another process to let go of `dataDir`. */
  onDataDirWait?: LockOptions['onWait'];
  /**
   * PGlite in memory (`memory://`) only: start from this data directory, as `dumpDataDir` returned it,
   * rather than an empty one (the tests' migrated template, test/support/database.ts).
   */
  loadDataDir?: Uint8Array | undefined;
}

// Each driver is imported only when chosen: a gateway on PostgreSQL never evaluates PGlite, and one on
// PGlite never evaluates pg and its adapter (start-up time and idle memory, see
// docs/decisions/0010-build-and-start-up.md).
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
    const limits = options.limits ?? DATABASE_DEFAULTS;
    // The pool is ours (not the adapter's) so its figures can be read; Prisma and migrations share it.
    const pool = createBoundedPool(pg.Pool, options.databaseUrl, limits);
    // pg-pool drops an idle connection the server terminates (restart, failover, a dropped database)
    // and re-emits its error on the pool, where an unheard 'error' event would end the process. Prisma's
    // adapter listens only while connected; this listener stays, including while the pool closes.
    pool.on('error', () => {});
    const database = wrap(
      'postgresql',
      new PrismaPg(pool),
      () => pool.end(),
      () => pgMigrationSession(pool, { Pool: pg.Pool, PrismaPg }),
      listenOnOwnConnection(pg.Client, options.databaseUrl),
      // Prisma's own wait to start a transaction outlasts the pool's, so the pool's refusal (or its
      // connection) decides; a transaction may take a few statements' time.
      { maxWait: limits.connectTimeoutMs + 1000, timeout: Math.max(5000, limits.statementTimeoutMs * 2) },
    );
    database.pool = () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: limits.poolSize,
    });
    return database;
  }
  // PostgreSQL's default 128 MB of shared buffers sit in PGlite's WebAssembly heap for the life of the
  // process; one embedded instance serves one gateway, so 16 MB keeps idle memory ~110 MB lower. A start
  // parameter leaves PGlite's postgresql.conf (time zone, locale) as it is.
  const startParams = ['-c', 'shared_buffers=16MB'];
  const { startPGliteWorker } = await import('./pglite-remote.js');
  if (options.dataDir === 'memory://') {
    const worker = await startPGliteWorker({
      dataDir: 'memory://',
      startParams,
      loadDataDir: options.loadDataDir,
    });
    return wrapPGlite(worker, { release: async () => {}, lost: new Promise<Error>(() => {}) });
  }
  const pgliteDir = path.join(options.dataDir, 'pglite');
  await mkdir(pgliteDir, { recursive: true }).catch((error: unknown) => {
    throw dataDirErrorOf(options.dataDir, error) ?? error;
  });
  const lock = await lockDataDir(options.dataDir, { onWait: options.onDataDirWait }).catch(
    (error: unknown) => {
      throw dataDirErrorOf(options.dataDir, error) ?? error;
    },
  );
  // A first start that fails half-way (a full disk) must not leave a half-initialised cluster behind that
  // every later start would trip over: an empty directory is removed again when PGlite cannot start in it.
  const fresh = (await readdir(pgliteDir)).length === 0;
  try {
    return wrapPGlite(await startPGliteWorker({ dataDir: pgliteDir, startParams }), lock);
  } catch (error) {
    if (fresh) await rm(pgliteDir, { recursive: true, force: true }).catch(() => {});
    await lock.release();
    throw dataDirErrorOf(options.dataDir, error) ?? error;
  }
}

/**
 * PGlite in its worker thread: Prisma, migrations and LISTEN all go through it. PGlite is a single
 * connection, so the migration session is that connection; close ends PGlite, then the thread, then
 * releases DATA_DIR. The database is lost when the thread dies or DATA_DIR's lock is taken from us.
 */
function wrapPGlite(worker: PGliteWorker, lock: DataDirLock): Database {
  const database = wrap(
    'pglite',
    worker.adapter,
    async () => {
      await worker.close();
      await lock.release();
    },
    async () => ({ adapter: worker.adapter, query: worker.rows, end: async () => {} }),
    async (channel, onWake) => {
      const unlisten = await worker.listen(channel, onWake);
      onWake();
      return unlisten;
    },
  );
  database.lost = Promise.race([worker.lost, lock.lost]);
  database.dumpDataDir = () => worker.dumpDataDir();
  return database;
}

/**
 * A pg pool of `poolSize` connections with a bounded queue in front: when every connection is busy and
 * `queueSize` requests already wait, the next is refused at once (DatabaseOverloadedError); a waiting one
 * gives up after `connectTimeoutMs`, which also bounds opening a connection. Statements end after
 * `statementTimeoutMs`: the server cancels them (statement_timeout) and the client stops waiting for an
 * answer that does not come (query_timeout, a hung server), which also drops that connection.
 */
function createBoundedPool(Pool: typeof pg.Pool, connectionString: string, limits: DatabaseLimits): pg.Pool {
  const pool = new Pool({
    connectionString,
    max: limits.poolSize,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    statement_timeout: limits.statementTimeoutMs,
    query_timeout: limits.statementTimeoutMs + 500,
    keepAlive: true,
  });
  // pool.query checks a connection out through this.connect, so both paths pass the bound.
  const connect = pool.connect.bind(pool) as (callback?: unknown) => unknown;
  pool.connect = ((callback?: (error: Error) => void) => {
    const busy = pool.totalCount >= limits.poolSize && pool.idleCount === 0;
    if (busy && pool.waitingCount >= limits.queueSize) {
      const error = new DatabaseOverloadedError(limits.queueSize);
      if (!callback) return Promise.reject(error);
      process.nextTick(() => callback(error));
      return undefined;
    }
    return connect(callback);
  }) as pg.Pool['connect'];
  return pool;
}

/**
 * PostgreSQL: one connection out of the pool for the whole run. The adapter gets a pool whose every query
 * goes to that connection, so the schema engine's statements run inside our transaction; the connection
 * is closed afterwards rather than returned, so no session state (lock, aborted transaction) leaks into
 * the pool.
 */
async function pgMigrationSession(
  pool: pg.Pool,
  { Pool, PrismaPg }: { Pool: typeof pg.Pool; PrismaPg: typeof PrismaPgAdapter },
): Promise<MigrationSession> {
  const connection = await pool.connect();
  // Migrations wait for the advisory lock and may rewrite large tables: no statement timeout, on the server
  // or in the client (this connection is closed afterwards, so the change ends with it).
  await connection.query('SET statement_timeout = 0');
  (
    connection as unknown as { connectionParameters: { query_timeout?: number } }
  ).connectionParameters.query_timeout = undefined;
  const sessionPool = new Pool({ max: 1 });
  sessionPool.query = connection.query.bind(connection) as pg.Pool['query'];
  sessionPool.connect = (() =>
    Promise.reject(new Error('a migration session has one connection'))) as pg.Pool['connect'];
  return {
    adapter: new PrismaPg(sessionPool),
    query: async <Row>(sql: string) => (await connection.query(sql)).rows as Row[],
    end: async () => connection.release(true),
  };
}

type Listen = Database['listen'];

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/**
 * PostgreSQL: LISTEN needs a session of its own, so a client outside the pool holds it for the life of the
 * gateway. When that connection drops (restart, failover) it reconnects with backoff, and wakes the
 * listener once listening again. The first attempt is awaited; a database that is down at that moment
 * is retried in the background like a dropped connection.
 */
function listenOnOwnConnection(Client: typeof pg.Client, connectionString: string): Listen {
  return async (channel, onWake) => {
    if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let current: pg.Client | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    let delayMs = 250;

    const schedule = () => {
      if (stopped) return;
      retry = setTimeout(() => void connect(), delayMs);
      retry.unref();
      delayMs = Math.min(delayMs * 2, 10_000);
    };
    async function connect() {
      const client = new Client({ connectionString });
      // A lost connection is told by 'end' (after 'error'); an unheard 'error' would end the process.
      client.on('error', () => {});
      client.on('end', () => {
        if (current !== client) return;
        current = undefined;
        schedule();
      });
      client.on('notification', () => onWake());
      try {
        await client.connect();
        await client.query(`LISTEN ${channel}`);
      } catch {
        await client.end().catch(() => {});
        schedule();
        return;
      }
      if (stopped) {
        await client.end().catch(() => {});
        return;
      }
      current = client;
      delayMs = 250;
      onWake();
    }

    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      // A hung server never acknowledges the goodbye: a shutdown waits for it one second at most.
      const ended = client?.end().catch(() => {});
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    };
  };
}

function wrap(
  kind: DatabaseKind,
  adapter: SqlMigrationAwareDriverAdapterFactory,
  closeDriver: () => Promise<void>,
  openMigrationSession: () => Promise<MigrationSession>,
  listen: Listen,
  transactionOptions?: { maxWait: number; timeout: number },
): Database {
  const prisma = new PrismaClient({ adapter, ...(transactionOptions ? { transactionOptions } : {}) });
  return {
    kind,
    prisma,
    listen,
    async migrate(options = {}) {
      // The schema engine is large; only load it when something is pending.
      const pending = await pendingMigrations((sql) => prisma.$queryRawUnsafe(sql), options.migrationsDir);
      return pending.length === 0 ? [] : applyMigrations(await openMigrationSession(), options);
    },
    async ready(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const answered = pendingMigrations((sql) => prisma.$queryRawUnsafe(sql)).then(
        (pending) => pending.length === 0,
        () => false,
      );
      try {
        return await Promise.race([answered, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}
