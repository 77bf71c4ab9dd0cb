import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrationsDir, readMigrations } from '../../src/db/migrate.js';

/** A copy of the migrations folder as it was before the migration `name` (the caller removes it). */
export async function migrationsBefore(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-migrations-'));
  await cp(path.join(migrationsDir, 'migration_lock.toml'), path.join(dir, 'migration_lock.toml'));
  for (const { path: folder } of (await readMigrations()).migrationDirectories) {
    if (folder >= name) break;
    await cp(path.join(migrationsDir, folder), path.join(dir, folder), { recursive: true });
  }
  return dir;
}
