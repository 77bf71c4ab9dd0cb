// Applies pending migrations to the configured database (PGlite under DATA_DIR, or DATABASE_URL).
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { databaseUrlErrorOf } from '../src/db/connect-error.js';
import { DataDirError } from '../src/db/data-dir.js';
import { DataDirLockedError } from '../src/db/data-dir-lock.js';

const config = loadConfig();
try {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    limits: config.database,
  });
  try {
    const applied = await db.migrate();
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await db.close();
  }
} catch (error) {
  // The same one-line refusals as the server's start-up.
  const oneLine =
    error instanceof DataDirLockedError || error instanceof DataDirError
      ? error
      : config.databaseUrl && databaseUrlErrorOf(config.databaseUrl, error);
  if (!oneLine) throw error;
  console.error(oneLine.message);
  process.exit(1);
}
