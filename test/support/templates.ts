import { buildTemplates } from './database.js';

/** Global setup: the migrated database templates (test/support/database.ts), once before any worker. */
export default async function templates() {
  await buildTemplates({ postgres: !!process.env.TEST_DATABASE_URL });
}
