import { defineConfig } from 'prisma/config';

// The CLI only generates code here; migrations are applied by src/db/migrate.ts through Prisma's WASM
// schema engine, and stay compatible with `prisma migrate deploy` for machines that have the native one.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/boardroom' },
});
