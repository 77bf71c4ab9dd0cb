import { defineConfig } from 'vitest/config';
import { browserTestsEnabled } from './test/browser/support/chromium.js';
import HeaviestProjectsFirst from './test/support/sequencer.js';

/**
 * The test projects, split by what they prove (docs/testing.md):
 * - `unit`: pure domain logic and the documents' links, once.
 * - `storage:pglite` and `storage:postgres`: what depends on the database engine (the queue, budgets,
 *   claims, leases, approvals decided once, the outbox and its relay, webhook delivery across instances,
 *   migrations, outages, tenant isolation, starting on either engine), on both. The PostgreSQL run uses
 *   Redis as the bus and fails, never skips, when either service cannot be reached.
 * - `api`: the contract of every face (GraphQL, REST, MCP, WebSockets, the plugins, the pages), once: on
 *   PostgreSQL and Redis when TEST_DATABASE_URL is set (CI), on PGlite otherwise.
 * - `browser`: pages in headless Chromium, once (on PGlite): only where Chromium is installed, and always
 *   when BROWSER_TESTS=1 (CI), which fails the run if it is missing.
 * The files of every project but `browser` share one module graph per worker (`isolate: false`): they
 * already keep apart by tenant and restore their spies. Every project's files share the two workers,
 * the heaviest projects' first (docs/decisions/0047-ci-in-fifteen-minutes.md).
 */
const unitTests = ['test/domain/**/*.test.ts', 'test/docs/**/*.test.ts'];
const browserTests = ['test/browser/**/*.test.ts'];
const storageTests = [
  'test/db/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/faults/**/*.test.ts',
  'test/connectors/*-migration.test.ts',
  'test/schema/agents-queue.test.ts',
  'test/schema/agents-budgets*.test.ts',
  'test/schema/agents-claim-wait*.test.ts',
  'test/schema/agents-lease.test.ts',
  'test/schema/agents-delegation.test.ts',
  'test/schema/breakers.test.ts',
  'test/schema/routines.test.ts',
  'test/schema/idempotency.test.ts',
  'test/schema/agents-task-approvals*.test.ts',
  'test/schema/webhooks-*.test.ts',
  'test/schema/finetuning-propagation.test.ts',
  'test/schema/experiments-live.test.ts',
  'test/schema/experiments-events.test.ts',
  'test/schema/connector-rate-limits.test.ts',
  'test/schema/model-routing.test.ts',
  'test/schema/task-runs.test.ts',
  'test/schema/deliverables.test.ts',
  'test/schema/cost-attribution.test.ts',
  'test/schema/task-reviews.test.ts',
  'test/mcp/tool-list-changes.test.ts',
  'test/observability/metrics.test.ts',
  'test/server/tenant-isolation.test.ts',
  'test/server/database-*.test.ts',
  'test/server/disk-full.test.ts',
  'test/server/response-cache-isolation.test.ts',
  'test/server/startup*.test.ts',
  'test/scripts/**/*.test.ts',
  'test/config/env-table.test.ts',
];
const allTests = ['test/**/*.test.ts'];
const withPostgres = !!process.env.TEST_DATABASE_URL;
const ensureBuild = 'test/support/ensure-build.ts';
const templates = 'test/support/templates.ts';
const requireServices = 'test/support/require-services.ts';

export default defineConfig({
  // graphql ships both ESM and CJS builds; Vite would load both and break instanceof checks.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files of one worker share a module graph (`isolate: false`): what a test stubs or spies on is put
    // back before the next.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    // Vitest's default in run mode is one worker per core but one (a single worker on two cores); the
    // database tests spend much of their time waiting on PostgreSQL, Redis and sockets, so two files at a
    // time keep both cores busy.
    maxWorkers: 2,
    // Every project runs in one pool of two workers; the heaviest projects' files start first.
    sequence: { sequencer: HeaviestProjectsFirst },
    // WebAssembly (PGlite's PostgreSQL, Prisma's query compiler) runs on V8's baseline compiler only: a test
    // process lives seconds, too short for optimized code to repay its compilation, which runs on background
    // threads beside the tests (PGlite files ~20% faster on Node 24, PostgreSQL files unchanged). It also
    // takes away the background compilation in flight when V8's JIT-page check fails
    // (docs/decisions/0011-test-processes.md, "A test process on Node 24 that dies of V8's JIT-page check").
    // The server itself keeps V8's tiers.
    execArgv: ['--liftoff-only'],
    projects: [
      { extends: true as const, test: { name: 'unit', include: unitTests, isolate: false } },
      {
        extends: true as const,
        test: {
          name: 'api',
          include: allTests,
          exclude: [...unitTests, ...browserTests, ...storageTests],
          env: { TEST_DB: withPostgres ? 'postgres' : 'pglite' },
          globalSetup: [...(withPostgres ? [requireServices] : []), ensureBuild, templates],
          isolate: false,
        },
      },
      {
        extends: true as const,
        test: {
          name: 'storage:pglite',
          include: storageTests,
          env: { TEST_DB: 'pglite' },
          globalSetup: [ensureBuild, templates],
          isolate: false,
        },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'storage:postgres',
                include: storageTests,
                env: { TEST_DB: 'postgres' },
                globalSetup: [requireServices, ensureBuild, templates],
                isolate: false,
              },
            },
          ]
        : []),
      ...(browserTestsEnabled()
        ? [
            {
              extends: true as const,
              test: {
                name: 'browser',
                include: browserTests,
                env: { TEST_DB: 'pglite' },
                globalSetup: ['test/browser/support/require-chromium.ts', ensureBuild, templates],
              },
            },
          ]
        : []),
    ],
  },
});
