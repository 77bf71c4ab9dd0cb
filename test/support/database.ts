import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/client.js';

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
 * PostgreSQL server.
 */
export async function createTestDatabase({ migrate = true } = {}): Promise<TestDatabase> {
  if (databaseKind === 'pglite') {
    const db = await openDatabase({ dataDir: 'memory://' });
    if (migrate) await db.migrate();
    return { db, url: undefined, drop: () => db.close() };
  }
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  const name = `boardroom_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir: 'memory://' });
  if (migrate) await db.migrate();
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      const cleanup = new pg.Client({ connectionString: serverUrl() });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
