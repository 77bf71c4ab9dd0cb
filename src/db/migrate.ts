import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';

/**
 * The package root: the nearest directory above this module that holds prisma/schema.prisma. Found by
 * walking up because this module runs from src/db (tsx, vitest) and from the bundle in dist/ alike.
 */
export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'prisma', 'schema.prisma'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`prisma/schema.prisma not found above ${from}`);
  }
}
export const schemaPath = path.join(projectRoot, 'prisma', 'schema.prisma');
export const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');

const noFilter: SchemaFilter = { externalTables: [], externalEnums: [] };

/** Reads prisma/migrations in the layout `prisma migrate deploy` uses. */
export async function readMigrations(dir = migrationsDir): Promise<MigrationList> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const folders = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const migrationDirectories = await Promise.all(
    folders.map(async (folder) => ({
      path: folder,
      migrationFile: {
        path: 'migration.sql',
        content: await readFile(path.join(dir, folder, 'migration.sql'), 'utf8').then(
          (ok) => ({ tag: 'ok' as const, value: ok }),
          (error: Error) => ({ tag: 'error' as const, value: error.message }),
        ),
      },
    })),
  );
  const lockfile = await readFile(path.join(dir, 'migration_lock.toml'), 'utf8').catch(() => null);
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: lockfile },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}

/**
 * One database connection held for a whole migration run, so that the advisory lock, each migration's
 * transaction and the schema engine's statements share one session. PGlite is a single connection
 * anyway; on PostgreSQL the session is one connection checked out of the pool.
 */
export interface MigrationSession {
  /** The schema engine's adapter, bound to this session's connection. */
  adapter: SqlMigrationAwareDriverAdapterFactory;
  /** Runs SQL without parameters on this session and returns its rows. */
  query<Row>(sql: string): Promise<Row[]>;
  /** Ends the session; on PostgreSQL the connection is closed, which also drops its advisory lock. */
  end(): Promise<void>;
}

export interface MigrateOptions {
  /** Aborting stops the run before the next migration (the one under way commits or rolls back first). */
  signal?: AbortSignal | undefined;
  /** Told the names of migrations an interrupted run left unfinished, once they have been applied again. */
  onRecovered?: ((names: string[]) => void) | undefined;
  /** Told each migration's name before it is applied. */
  onApplying?: ((name: string) => void) | undefined;
  /** The migrations folder (default: prisma/migrations of the package). */
  migrationsDir?: string | undefined;
}

/**
 * The key `prisma migrate deploy` locks with (`pg_advisory_lock(72707369)`), so our runs are serialized
 * against each other and against the stock CLI alike.
 */
const MIGRATION_LOCK = 72707369;

/**
 * Applies pending migrations and records them in `_prisma_migrations`; returns the names it applied.
 *
 * Each migration runs in its own transaction together with its bookkeeping row: PostgreSQL (and PGlite)
 * run DDL transactionally, so an interrupted migration leaves neither tables nor a row behind, and a row
 * without `finished_at` can only come from a run that did not commit (an older runner, or the stock
 * CLI). Such a row is marked rolled back, as `prisma migrate resolve --rolled-back` would, inside the
 * transaction that applies the migration again: if the retry fails, nothing changes.
 */
export async function applyMigrations(
  session: MigrationSession,
  options: MigrateOptions = {},
): Promise<string[]> {
  try {
    await session.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    const migrations = await readMigrations(options.migrationsDir);
    // Read under the lock: another instance may have applied everything while this one waited.
    const pending = await pendingMigrations(session.query, options.migrationsDir);
    if (pending.length === 0) return [];
    // The schema engine (its glue and a large WASM) is loaded only when a migration is pending.
    const { openSchemaEngine } = await import('./schema-engine.js');
    const engine = await openSchemaEngine(scriptsInSavepoints(session), await readFile(schemaPath, 'utf8'));
    const applied: string[] = [];
    try {
      for (const name of pending) {
        // The engine runs on this thread and may settle without I/O, so a pending signal's handler only
        // runs once the event loop gets a turn: give it one before each migration.
        await new Promise((resolve) => setImmediate(resolve));
        options.signal?.throwIfAborted();
        options.onApplying?.(name);
        const upTo = migrations.migrationDirectories.findIndex((dir) => dir.path === name) + 1;
        await session.query('BEGIN');
        try {
          const recovered = await markUnfinishedRolledBack(session);
          // Offered only the history up to this migration, the engine applies exactly this one.
          const result = await engine.applyMigrations({
            migrationsList: {
              ...migrations,
              migrationDirectories: migrations.migrationDirectories.slice(0, upTo),
            },
            filters: noFilter,
          });
          await session.query('COMMIT');
          applied.push(...result.appliedMigrationNames);
          if (recovered.length > 0) options.onRecovered?.(recovered);
        } catch (error) {
          await session.query('ROLLBACK').catch(() => {});
          throw error;
        }
      }
    } finally {
      engine.free();
    }
    return applied;
  } finally {
    await session.end();
  }
}

/**
 * The session's adapter with each migration script run inside a savepoint: when a script fails, rolling
 * back to the savepoint lets the engine still record the failure in the transaction (rolled back by us
 * afterwards) and report the script's own error instead of "current transaction is aborted".
 */
function scriptsInSavepoints(session: MigrationSession): SqlMigrationAwareDriverAdapterFactory {
  const { adapter } = session;
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    connectToShadowDb: () => adapter.connectToShadowDb(),
    async connect() {
      const connection = await adapter.connect();
      const executeScript = connection.executeScript.bind(connection);
      connection.executeScript = async (script: string) => {
        await session.query('SAVEPOINT migration_script');
        try {
          await executeScript(script);
        } catch (error) {
          await session.query('ROLLBACK TO SAVEPOINT migration_script');
          throw error;
        }
        await session.query('RELEASE SAVEPOINT migration_script');
      };
      return connection;
    },
  };
}

/** Marks rows of migrations that never finished as rolled back; returns their names. */
async function markUnfinishedRolledBack(session: MigrationSession): Promise<string[]> {
  const [table] = await session.query<{ found: boolean }>(
    "SELECT to_regclass('_prisma_migrations') IS NOT NULL AS found",
  );
  if (!table?.found) return [];
  const rows = await session.query<{ migration_name: string }>(
    `UPDATE _prisma_migrations SET rolled_back_at = now()
      WHERE finished_at IS NULL AND rolled_back_at IS NULL RETURNING migration_name`,
  );
  return rows.map((row) => row.migration_name);
}

/**
 * SQL that takes a database migrated with the existing history to prisma/schema.prisma, computed on a
 * shadow database from the adapter. Empty when they already agree.
 */
export async function diffMigrationsToSchema(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
): Promise<string> {
  const datamodel = await readFile(schemaPath, 'utf8');
  const { openSchemaEngine } = await import('./schema-engine.js');
  const engine = await openSchemaEngine(adapterFactory, datamodel);
  try {
    const result = await engine.diff({
      from: { tag: 'migrations', ...(await readMigrations()) },
      to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: datamodel }] },
      script: true,
      exitCode: null,
      filters: noFilter,
    });
    const sql = result.stdout ?? '';
    return /^\s*(-- This is an empty migration\.)?\s*$/.test(sql) ? '' : sql;
  } finally {
    engine.free();
  }
}

/** Names of migrations on disk that the database has not finished applying. */
export async function pendingMigrations(
  query: (sql: string) => Promise<{ migration_name: string }[]>,
  dir = migrationsDir,
): Promise<string[]> {
  const { migrationDirectories } = await readMigrations(dir);
  const applied = await query(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  ).catch(() => []);
  const done = new Set(applied.map((row) => row.migration_name));
  return migrationDirectories.map((dir) => dir.path).filter((name) => !done.has(name));
}
