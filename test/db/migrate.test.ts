import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { readMigrations } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

const opened: TestDatabase[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const database of opened) await database.drop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase({ migrate: false });
  opened.push(database);
  return database;
}

interface MigrationRow {
  migration_name: string;
  finished: boolean;
  rolled_back: boolean;
}

function migrationRows(database: TestDatabase): Promise<MigrationRow[]> {
  return database.db.prisma.$queryRawUnsafe<MigrationRow[]>(
    `SELECT migration_name, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back
       FROM _prisma_migrations ORDER BY migration_name, started_at`,
  );
}

function tableExists(database: TestDatabase, table: string): Promise<boolean> {
  return database.db.prisma
    .$queryRawUnsafe<{ found: boolean }[]>(`SELECT to_regclass('${table}') IS NOT NULL AS found`)
    .then((rows) => rows[0]?.found === true);
}

/** A migrations folder in `prisma migrate deploy`'s layout holding the given scripts. */
async function migrationsFolder(scripts: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-migrations-'));
  dirs.push(dir);
  await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  for (const [name, sql] of Object.entries(scripts)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

// The bookkeeping table exactly as Prisma's schema engine creates it.
const prismaMigrationsTable = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

describe('migrations', () => {
  it('recovers a migration an interrupted start left unfinished, then applies it', async () => {
    const database = await freshDatabase();
    const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);
    // What an interrupted first start used to leave: the bookkeeping row of the first migration
    // without finished_at, and none of its tables.
    await database.db.prisma.$executeRawUnsafe(prismaMigrationsTable);
    await database.db.prisma.$executeRawUnsafe(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name)
       VALUES ('00000000-0000-4000-8000-000000000001', 'interrupted', '${names[0]}')`,
    );
    const recovered: string[][] = [];

    const applied = await database.db.migrate({ onRecovered: (found) => recovered.push(found) });

    expect(applied).toEqual(names);
    expect(recovered).toEqual([[names[0]]]);
    expect(await database.db.ready()).toBe(true);
    const rows = await migrationRows(database);
    expect(rows.filter((row) => row.migration_name === names[0])).toEqual([
      { migration_name: names[0], finished: false, rolled_back: true },
      { migration_name: names[0], finished: true, rolled_back: false },
    ]);
    expect(rows.filter((row) => row.finished && !row.rolled_back)).toHaveLength(names.length);
  });

  it('applies each migration atomically: a failing one leaves no table and no bookkeeping row', async () => {
    const database = await freshDatabase();
    const migrationsDir = await migrationsFolder({
      '0001_first': 'CREATE TABLE probe_first (id INTEGER);\n',
      '0002_broken': 'CREATE TABLE probe_second (id INTEGER);\nSELECT 1 / 0;\n',
    });

    await expect(database.db.migrate({ migrationsDir })).rejects.toThrow(/division by zero/);

    expect(await tableExists(database, 'probe_first')).toBe(true);
    expect(await tableExists(database, 'probe_second')).toBe(false);
    expect(await migrationRows(database)).toEqual([
      { migration_name: '0001_first', finished: true, rolled_back: false },
    ]);
  });

  it.runIf(databaseKind === 'postgresql')(
    'two instances starting at once on one database apply each migration once',
    async () => {
      const database = await freshDatabase();
      const other = await openDatabase({ databaseUrl: database.url, dataDir: 'memory://' });
      const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);
      try {
        const [first, second] = await Promise.all([database.db.migrate(), other.migrate()]);
        expect([...first, ...second].sort()).toEqual(names);
        expect(await other.ready()).toBe(true);
      } finally {
        await other.close();
      }
      const rows = await migrationRows(database);
      expect(rows.map((row) => row.migration_name)).toEqual(names);
      expect(rows.every((row) => row.finished && !row.rolled_back)).toBe(true);
    },
  );
});
