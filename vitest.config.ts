import { defineConfig } from 'vitest/config';
import { browserTestsEnabled } from './test/browser/support/chromium.js';

// Pure domain logic runs once; everything that touches a database runs on PGlite and, when
// TEST_DATABASE_URL is set (CI sets it), again on PostgreSQL with Redis as the bus.
const databaseTests = ['test/**/*.test.ts'];
// Pure logic and the documents' links: no database, so once.
const unitTests = ['test/domain/**/*.test.ts', 'test/docs/**/*.test.ts'];
// Pages in headless Chromium, once (on PGlite): only where Chromium is installed, and always when
// BROWSER_TESTS=1 (CI), which fails the run if it is missing.
const browserTests = ['test/browser/**/*.test.ts'];
const withPostgres = !!process.env.TEST_DATABASE_URL;

export default defineConfig({
  // graphql ships both ESM and CJS builds; Vite would load both and break instanceof checks.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default in run mode is one worker per core but one (a single worker on two cores); the
    // database tests spend much of their time waiting on PostgreSQL, Redis and sockets, so two files at a
    // time keep both cores busy.
    maxWorkers: 2,
    // WebAssembly (PGlite's PostgreSQL, Prisma's query compiler) runs on V8's baseline compiler only: a test
    // process lives seconds, too short for optimized code to repay its compilation, which runs on background
    // threads beside the tests (PGlite files ~20% faster on Node 24, PostgreSQL files unchanged). It also
    // takes away the background compilation in flight when V8's JIT-page check fails
    // (docs/decisions/0011-test-processes.md, "A test process on Node 24 that dies of V8's JIT-page check").
    // The server itself keeps V8's tiers.
    execArgv: ['--liftoff-only'],
    projects: [
      { extends: true as const, test: { name: 'unit', include: unitTests } },
      {
        extends: true as const,
        test: {
          name: 'pglite',
          include: databaseTests,
          exclude: [...unitTests, ...browserTests],
          env: { TEST_DB: 'pglite' },
        },
      },
      ...(browserTestsEnabled()
        ? [
            {
              extends: true as const,
              test: {
                name: 'browser',
                include: browserTests,
                env: { TEST_DB: 'pglite' },
                globalSetup: ['test/browser/support/require-chromium.ts'],
                fileParallelism: false,
              },
            },
          ]
        : []),
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: databaseTests,
                exclude: [...unitTests, ...browserTests],
                env: { TEST_DB: 'postgres' },
                globalSetup: ['test/support/require-services.ts'],
              },
            },
          ]
        : []),
    ],
  },
});
