import { graphql } from '../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../test/support/app.js';
import type { DomainBenchmark } from './domains.js';

const CreateTest = graphql(`
  mutation BenchCreateAbTest($input: CreateAbTestInput!) {
    createAbTest(input: $input) {
      id
      variants {
        id
      }
    }
  }
`);

const StartTest = graphql(`
  mutation BenchStartAbTest($id: ID!) {
    startAbTest(id: $id) {
      id
    }
  }
`);

const RecordEvents = graphql(`
  mutation BenchRecordEvents($testId: ID!, $events: [AbTestEventInput!]!) {
    recordAbTestEvents(testId: $testId, events: $events) {
      newObservations
    }
  }
`);

async function runningTest(t: TestApp, caller: Caller) {
  const created = await t.graphql(
    CreateTest,
    { input: { name: `bench-${Date.now()}`, variants: [{ name: 'control' }, { name: 'treatment' }] } },
    caller,
  );
  const test = created.data?.createAbTest;
  if (!test) throw new Error(`createAbTest failed: ${JSON.stringify(created.errors)}`);
  await t.graphql(StartTest, { id: test.id }, caller);
  return test;
}

/** Results of a test with 1,000,000 subjects: counters make the read independent of the subject count. */
export const abTestResultsAtScale: DomainBenchmark = {
  name: 'GET ab-test results, 1,000,000 subjects',
  perRequestTargetMs: 20,
  async prepare(t, caller, baseUrl) {
    const test = await runningTest(t, caller);
    const [control, treatment] = test.variants.map((variant) => variant.id);
    // Subjects are seeded in SQL (the read path under test only reads the counters kept beside them).
    await t.db.prisma.$executeRawUnsafe(
      `INSERT INTO ab_test_subjects (test_id, subject_id, variant_id, converted)
       SELECT $1::uuid, 's' || i, CASE WHEN i % 2 = 0 THEN $2::uuid ELSE $3::uuid END, i % 7 = 0
       FROM generate_series(1, 1000000) AS i`,
      test.id,
      control,
      treatment,
    );
    await t.db.prisma.$executeRawUnsafe(
      `UPDATE ab_test_variants v SET observations = s.n, successes = s.c
       FROM (SELECT variant_id, count(*)::int AS n, count(*) FILTER (WHERE converted)::int AS c
             FROM ab_test_subjects WHERE test_id = $1::uuid GROUP BY variant_id) s
       WHERE v.id = s.variant_id`,
      test.id,
    );
    return {
      url: `${baseUrl}/api/v1/ux/ab-tests/${test.id}/results`,
      init: { method: 'GET', headers: { authorization: `Bearer ${caller.token}` } },
    };
  },
};

/** Event ingestion through recordAbTestEvents, 1000 events per call, reported as events per second. */
export async function measureIngestion(t: TestApp, caller: Caller, seconds: number) {
  const test = await runningTest(t, caller);
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let events = 0;
  for (let chunk = 0; performance.now() < deadline && chunk < 1000; chunk++) {
    const batch = Array.from({ length: 1000 }, (_, i) => ({
      subjectId: `c${chunk}-${i}`,
      converted: i % 5 === 0,
    }));
    const result = await t.graphql(RecordEvents, { testId: test.id, events: batch }, caller);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    events += batch.length;
  }
  return events / ((performance.now() - started) / 1000);
}
