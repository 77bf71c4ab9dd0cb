import { defineConfig } from 'vitest/config';

// Pure domain logic runs once; everything that touches a database runs on PGlite and, when
// TEST_DATABASE_URL is set (CI sets it), again on PostgreSQL with Redis as the bus.
const databaseTests = ['test/**/*.test.ts'];
const unitTests = ['test/domain/**/*.test.ts'];
const withPostgres = !!process.env.TEST_DATABASE_URL;

export default defineConfig({
  // graphql ships both ESM and CJS builds; Vite would load both and break instanceof checks.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true as const, test: { name: 'unit', include: unitTests } },
      {
        extends: true as const,
        test: { name: 'pglite', include: databaseTests, exclude: unitTests, env: { TEST_DB: 'pglite' } },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: databaseTests,
                exclude: unitTests,
                env: { TEST_DB: 'postgres' },
                globalSetup: ['test/support/require-services.ts'],
              },
            },
          ]
        : []),
    ],
  },
});
