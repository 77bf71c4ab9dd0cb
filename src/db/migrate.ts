import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';
import { openSchemaEngine } from './schema-engine.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
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

/** Applies pending migrations and records them in `_prisma_migrations`; returns the names it applied. */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
): Promise<string[]> {
  const engine = await openSchemaEngine(adapterFactory, await readFile(schemaPath, 'utf8'));
  try {
    const { appliedMigrationNames } = await engine.applyMigrations({
      migrationsList: await readMigrations(),
      filters: noFilter,
    });
    return appliedMigrationNames;
  } finally {
    engine.free();
  }
}

/**
 * SQL that takes a database migrated with the existing history to prisma/schema.prisma, computed on a
 * shadow database from the adapter. Empty when they already agree.
 */
export async function diffMigrationsToSchema(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
): Promise<string> {
  const datamodel = await readFile(schemaPath, 'utf8');
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
): Promise<string[]> {
  const { migrationDirectories } = await readMigrations();
  const applied = await query(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  ).catch(() => []);
  const done = new Set(applied.map((row) => row.migration_name));
  return migrationDirectories.map((dir) => dir.path).filter((name) => !done.has(name));
}
