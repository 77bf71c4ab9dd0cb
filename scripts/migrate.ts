// Applies pending migrations to the configured database (PGlite under DATA_DIR, or DATABASE_URL).
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';

const config = loadConfig();
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
