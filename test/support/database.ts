import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/client.js';
import { migrationsDir, projectRoot } from '../../src/db/migrate.js';

/** Which database this test run uses: the vitest project sets TEST_DB. */
export const databaseKind = process.env.TEST_DB === 'postgres' ? 'postgresql' : 'pglite';

function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url)
    throw new Error(
      'TEST_DB=postgres needs TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)',
    );
  return url;
}

export interface TestDatabase {
  db: Database;
  /** postgres:// URL of the fresh database (PostgreSQL runs only), for a second instance. */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * A fresh database, migrated unless `migrate` is false: in-memory PGlite, or a new database on the
 * PostgreSQL server. A migrated one is a copy of a template migrated once per set of migrations (see
 * `migratedTemplate`): running every migration again for each of a few hundred databases took most of
 * the suite's time.
 */
export async function createTestDatabase({ migrate = true } = {}): Promise<TestDatabase> {
  if (databaseKind === 'pglite') {
    const loadDataDir = migrate ? await pgliteTemplate() : undefined;
    const db = await openDatabase({ dataDir: 'memory://', loadDataDir });
    return { db, url: undefined, drop: () => db.close() };
  }
  const name = `boardroom_test_${randomBytes(6).toString('hex')}`;
  const template = migrate ? ` TEMPLATE ${await postgresTemplate()}` : '';
  await withServer((admin) => admin.query(`CREATE DATABASE ${name}${template}`));
  const url = databaseUrl(name);
  const db = await openDatabase({ databaseUrl: url, dataDir: 'memory://' });
  return {
    db,
    url,
    async drop() {
      await db.close();
      await withServer((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * Builds the migrated templates before the workers start (the projects' global setup), so that they do
 * not race to build the same; a worker that finds none builds it all the same.
 */
export async function buildTemplates({ postgres }: { postgres: boolean }): Promise<void> {
  await pgliteTemplateDir();
  if (postgres) await postgresTemplate();
}

/**
 * Copies a migrated PGlite data directory to `target` (which must not exist yet): what a server's first
 * start leaves in DATA_DIR/pglite, for process tests whose subject is not that first start.
 */
export async function copyMigratedPGliteDir(target: string): Promise<void> {
  await cp(await pgliteTemplateDir(), target, { recursive: true });
}

/**
 * A migrated PostgreSQL database copied from the template, by URL, for a process that connects itself.
 */
export async function createMigratedPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `boardroom_test_${randomBytes(6).toString('hex')}`;
  await withServer(async (admin) =>
    admin.query(`CREATE DATABASE ${name} TEMPLATE ${await postgresTemplate()}`),
  );
  return {
    url: databaseUrl(name),
    async drop() {
      await withServer((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

async function withServer<T>(run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * What the template depends on: every migration's text and the PGlite release (its data directory's
 * format). A change to either names another template, so a stale one is never used.
 */
const templateKey = (async () => {
  const hash = createHash('sha256');
  const pglite = JSON.parse(
    await readFile(path.join(projectRoot, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  ) as { version: string };
  hash.update(pglite.version);
  for (const folder of (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()) {
    hash.update(folder).update(await readFile(path.join(migrationsDir, folder, 'migration.sql')));
  }
  return hash.digest('hex').slice(0, 16);
})();

let postgresName: Promise<string> | undefined;
/** The PostgreSQL template's name, once it exists (checked once per process). */
function postgresTemplate(): Promise<string> {
  postgresName ??= templateKey.then(async (key) => {
    const name = `boardroom_template_${key}`;
    await ensurePostgresTemplate(name);
    return name;
  });
  return postgresName;
}

/**
 * The PostgreSQL template: a database migrated once and renamed into place, so that a run that stops
 * half-way never leaves a template others would copy, and two runs building it at once both end well.
 */
async function ensurePostgresTemplate(name: string): Promise<void> {
  const exists = await withServer(
    async (admin) => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount,
  );
  if (exists) return;
  const building = `${name}_${randomBytes(4).toString('hex')}`;
  await withServer((admin) => admin.query(`CREATE DATABASE ${building}`));
  const db = await openDatabase({ databaseUrl: databaseUrl(building), dataDir: 'memory://' });
  try {
    await db.migrate();
  } finally {
    await db.close();
  }
  await withServer(async (admin) => {
    try {
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      // Another run renamed its own first: keep that one.
      if ((error as { code?: string }).code !== '42P04') throw error;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    }
  });
}

let pgliteDump: Promise<Uint8Array> | undefined;
/**
 * The PGlite template: a migrated in-memory database's data directory, kept in node_modules/.cache (it
 * goes with the installed packages) and written under another name first, then renamed.
 */
function pgliteTemplate(): Promise<Uint8Array> {
  pgliteDump ??= (async () => {
    const dir = path.join(projectRoot, 'node_modules/.cache/boardroom-test');
    const file = path.join(dir, `pglite-${await templateKey}.tar`);
    try {
      return new Uint8Array(await readFile(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const db = await openDatabase({ dataDir: 'memory://' });
    let dump: Uint8Array;
    try {
      await db.migrate();
      dump = await (db.dumpDataDir as () => Promise<Uint8Array>)();
    } finally {
      await db.close();
    }
    await mkdir(dir, { recursive: true });
    const building = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(building, dump);
    await rename(building, file);
    return dump;
  })();
  return pgliteDump;
}

let pgliteDir: Promise<string> | undefined;
/**
 * The PGlite template as a data directory on disk (beside the dump, built from it once and renamed into
 * place), for process tests to copy: a server's first start there finds every migration applied.
 */
function pgliteTemplateDir(): Promise<string> {
  pgliteDir ??= (async () => {
    const dir = path.join(projectRoot, `node_modules/.cache/boardroom-test/pglite-${await templateKey}`);
    try {
      await readdir(dir);
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const dump = await pgliteTemplate();
    const building = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = await PGlite.create({
      dataDir: building,
      loadDataDir: new Blob([dump as Uint8Array<ArrayBuffer>]),
    });
    await pglite.close();
    await rename(building, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another run put its own in place first: keep that one.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      await rm(building, { recursive: true, force: true });
    });
    return dir;
  })();
  return pgliteDir;
}
