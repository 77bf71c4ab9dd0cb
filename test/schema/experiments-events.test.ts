import { describe, expect, it } from 'vitest';
import { assignVariant } from '../../src/domain/experiments/index.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import {
  CompleteAbTest,
  type CreatedTest,
  codeOf,
  detailOf,
  draftTest,
  RecordAbTestEvents,
  runningTest,
  totalCounts,
  variantCounts,
} from './experiments-support.js';

const Assign = graphql(`
  mutation ExperimentsAssign($testId: ID!, $subjectId: String!) {
    assignAbTestVariant(testId: $testId, subjectId: $subjectId) {
      testId
      subjectId
      variantId
      variantName
      converted
      assignedAt
      convertedAt
    }
  }
`);

const Convert = graphql(`
  mutation ExperimentsConvert($testId: ID!, $subjectId: String!) {
    recordAbTestConversion(testId: $testId, subjectId: $subjectId) {
      variantId
      converted
      convertedAt
    }
  }
`);

let t: TestApp;
let operator: Caller;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

const inTenant = (roles: Caller['roles']) => t.caller(roles, { tenantId: operator.tenantId });
const counts = (test: CreatedTest) => variantCounts(t, operator, test);
const totals = (test: CreatedTest) => totalCounts(t, operator, test);

describe('recordAbTestEvents', () => {
  it('counts each subject once as an observation and at most once as a success', async () => {
    const test = await runningTest(t, operator);
    const [a, b] = test.variantIds;
    const events = [
      { subjectId: 's1', variantId: a },
      { subjectId: 's1', variantId: a, converted: true },
      { subjectId: 's1', variantId: a, converted: true },
      { subjectId: 's2', variantId: b, converted: true },
      { subjectId: 's2', variantId: b },
      { subjectId: 's3', variantId: b },
    ];
    const result = await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
    expect(result.data?.recordAbTestEvents).toEqual({
      received: 6,
      newObservations: 3,
      newSuccesses: 2,
      repeats: 2,
      variantMismatches: 0,
    });
    expect(await counts(test)).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('counts nothing new when the same events arrive again', async () => {
    const test = await runningTest(t, operator);
    const events = [{ subjectId: 'a', converted: true }, { subjectId: 'b' }];
    await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
    const again = await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
    expect(again.data?.recordAbTestEvents).toMatchObject({ newObservations: 0, newSuccesses: 0, repeats: 2 });
    const total = await totals(test);
    expect(total).toEqual([2, 1]);
  });

  it('keeps exact counts under concurrent overlapping calls', async () => {
    const test = await runningTest(t, operator);
    const calls = Array.from({ length: 6 }, (_, call) =>
      Array.from({ length: 300 }, (_, k) => {
        const n = call * 50 + k;
        return { subjectId: `subject-${n}`, converted: n % 3 === 0 && k % 2 === call % 2 };
      }),
    );
    const distinct = new Set(calls.flat().map((event) => event.subjectId));
    const converted = new Set(
      calls
        .flat()
        .filter((event) => event.converted)
        .map((event) => event.subjectId),
    );
    const receipts = await Promise.all(
      calls.map((events) => t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator)),
    );
    const sum = (field: 'newObservations' | 'newSuccesses') =>
      receipts.reduce((total, receipt) => total + (receipt.data?.recordAbTestEvents[field] ?? 0), 0);
    expect([sum('newObservations'), sum('newSuccesses')]).toEqual([distinct.size, converted.size]);
    expect(await totals(test)).toEqual([distinct.size, converted.size]);
  });

  it('stores, finds again and converts subjects whose ids need quoting in SQL, arrays or JSON', async () => {
    const test = await runningTest(t, operator);
    const [a, b] = test.variantIds;
    const subjectIds = ['a"b', 'back\\slash', '{braces,comma}', 'NULL', '', "it's", 'tab\there', 'ü 😀'];
    const ids = subjectIds.map((id, index) => `${id}-${index}`);
    const observed = await t.graphql(
      RecordAbTestEvents,
      {
        testId: test.id,
        events: ids.map((subjectId, index) => ({ subjectId, variantId: index % 2 ? b : a })),
      },
      operator,
    );
    expect(observed.data?.recordAbTestEvents).toMatchObject({ newObservations: ids.length, repeats: 0 });
    const converted = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: ids.map((subjectId) => ({ subjectId, converted: true })) },
      operator,
    );
    expect(converted.data?.recordAbTestEvents).toEqual({
      received: ids.length,
      newObservations: 0,
      newSuccesses: ids.length,
      repeats: 0,
      variantMismatches: 0,
    });
    const stored = await t.db.prisma.abTestSubject.findMany({ where: { testId: test.id } });
    expect(stored.map((subject) => [subject.subjectId, subject.converted]).sort()).toEqual(
      ids.map((id) => [id, true]).sort(),
    );
    expect(await counts(test)).toEqual([
      [4, 4],
      [4, 4],
    ]);
  });

  // PGlite has one connection: no writer can commit between a batch's read and its lock there.
  it.skipIf(databaseKind === 'pglite')(
    'applies a batch again when a writer of the same test commits between its read and its lock',
    async () => {
      const test = await runningTest(t, operator);
      const [a, b] = test.variantIds;
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // Another writer: holds the test's lock, stores subject x on variant b, converted, and commits
      // once the batch below has read (x unknown) and waits for the lock.
      const writer = t.db.prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM ab_tests WHERE id = ${test.id}::uuid FOR NO KEY UPDATE`;
        await tx.$executeRaw`
          INSERT INTO ab_test_subjects (test_id, subject_id, variant_id, converted, converted_at)
          VALUES (${test.id}::uuid, 'x', ${b}::uuid, true, now())`;
        await tx.$executeRaw`
          UPDATE ab_test_variants SET observations = observations + 1, successes = successes + 1
          WHERE id = ${b}::uuid`;
        locked();
        await released;
      });
      await holding;
      const events = [
        { subjectId: 'x', variantId: a, converted: true },
        { subjectId: 'y', variantId: a },
      ];
      const call = t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
      await expect
        .poll(
          async () => {
            const [row] = await t.db.prisma.$queryRaw<{ waiting: number }[]>`
              SELECT count(*)::int AS waiting FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`;
            return row?.waiting;
          },
          { timeout: 5000, interval: 10 },
        )
        .toBe(1);
      release();
      await writer;
      const result = await call;
      expect(result.data?.recordAbTestEvents).toEqual({
        received: 2,
        newObservations: 1,
        newSuccesses: 0,
        repeats: 1,
        variantMismatches: 1,
      });
      expect(await counts(test)).toEqual([
        [1, 0],
        [1, 1],
      ]);
    },
  );

  it('assigns subjects without a variant by the sticky rule, honouring the weights', async () => {
    const test = await runningTest(t, operator, [
      { name: 'control', weight: 1 },
      { name: 'treatment', weight: 3 },
    ]);
    const subjects = Array.from({ length: 400 }, (_, i) => `user-${i}`);
    await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: subjects.map((subjectId) => ({ subjectId })) },
      operator,
    );
    const weighted = [
      { id: test.variantIds[0] ?? '', weight: 1 },
      { id: test.variantIds[1] ?? '', weight: 3 },
    ];
    const expected = test.variantIds.map(
      (id) => subjects.filter((s) => assignVariant(test.id, s, weighted) === id).length,
    );
    expect(await counts(test)).toEqual(expected.map((n) => [n, 0]));
  });

  it('keeps the first assignment and ignores an event naming another variant', async () => {
    const test = await runningTest(t, operator);
    const [a, b] = test.variantIds;
    await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's1', variantId: a }] },
      operator,
    );
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's1', variantId: b, converted: true }] },
      operator,
    );
    expect(result.data?.recordAbTestEvents).toMatchObject({
      repeats: 1,
      variantMismatches: 1,
      newSuccesses: 0,
    });
    expect(await counts(test)).toEqual([
      [1, 0],
      [0, 0],
    ]);
  });

  it('refuses a variant of another test with a value_error at the event and stores nothing', async () => {
    const test = await runningTest(t, operator);
    const other = await runningTest(t, operator);
    const events = [{ subjectId: 'ok' }, { subjectId: 's1', variantId: other.variantIds[0] }];
    const result = await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
    expect(detailOf(result)).toMatchObject([{ type: 'value_error', loc: ['events', 1, 'variantId'] }]);
    expect(await counts(test)).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('refuses more than 1000 events with too_long at ["events"]', async () => {
    const test = await runningTest(t, operator);
    const events = Array.from({ length: 1001 }, (_, i) => ({ subjectId: `s${i}` }));
    const result = await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
    expect(detailOf(result)).toMatchObject([
      {
        type: 'too_long',
        loc: ['events'],
        ctx: { field_type: 'List', max_length: 1000, actual_length: 1001 },
      },
    ]);
  });

  it('stores no subject row for a batch it refuses, whatever the reason', async () => {
    const test = await runningTest(t, operator);
    const other = await runningTest(t, operator);
    const oversized = Array.from({ length: 1001 }, (_, i) => ({ subjectId: `big${i}` }));
    const foreign = [{ subjectId: 'fine' }, { subjectId: 'bad', variantId: other.variantIds[0] }];

    await t.graphql(RecordAbTestEvents, { testId: test.id, events: oversized }, operator);
    await t.graphql(RecordAbTestEvents, { testId: test.id, events: foreign }, operator);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    const late = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 'late' }] },
      operator,
    );

    expect(codeOf(late)).toBe('CONFLICT');
    expect(await t.db.prisma.abTestSubject.count({ where: { testId: test.id } })).toBe(0);
    expect(await totals(test)).toEqual([0, 0]);
  });

  it('keeps a subject from referencing a variant of another test, in the schema itself', async () => {
    const test = await runningTest(t, operator);
    const other = await runningTest(t, operator);

    const insert = t.db.prisma.$executeRaw`
      INSERT INTO ab_test_subjects (test_id, subject_id, variant_id)
      VALUES (${test.id}::uuid, 'stray', ${other.variantIds[0]}::uuid)`;

    await expect(insert).rejects.toThrow(/foreign key/i);
  });

  it('refuses a variantId that is not a uuid with uuid_parsing', async () => {
    const test = await runningTest(t, operator);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's', variantId: 'x' }] },
      operator,
    );
    expect(detailOf(result)).toMatchObject([{ type: 'uuid_parsing', loc: ['events', 0, 'variantId'] }]);
  });

  it('refuses an empty subjectId', async () => {
    const test = await runningTest(t, operator);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: '' }] },
      operator,
    );
    expect(detailOf(result)).toMatchObject([{ type: 'string_too_short', loc: ['events', 0, 'subjectId'] }]);
  });

  it.each([
    ['draft', (test: CreatedTest) => Promise.resolve(test)],
    ['completed', (test: CreatedTest) => t.graphql(CompleteAbTest, { id: test.id }, operator)],
  ] as const)('answers CONFLICT for events on a %s test and counts nothing', async (status, settle) => {
    const test = status === 'draft' ? await draftTest(t, operator) : await runningTest(t, operator);
    await settle(test);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's' }] },
      operator,
    );
    expect([codeOf(result), result.errors?.[0]?.message]).toEqual([
      'CONFLICT',
      `A/B test ${test.id} is ${status}; events are accepted only while it is running`,
    ]);
    expect(await counts(test)).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it.each([['agent'], ['chairman']] as const)('is allowed to the %s role', async (role) => {
    const test = await runningTest(t, operator);
    const caller = await inTenant([role]);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's' }] },
      caller,
    );
    expect(result.data?.recordAbTestEvents.newObservations).toBe(1);
  });

  it('is forbidden to the member role', async () => {
    const test = await runningTest(t, operator);
    const member = await inTenant(['member']);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's' }] },
      member,
    );
    expect(codeOf(result)).toBe('FORBIDDEN');
  });

  it("answers NOT_FOUND for another tenant's test", async () => {
    const test = await runningTest(t, operator);
    const stranger = await t.caller(['operator']);
    const result = await t.graphql(
      RecordAbTestEvents,
      { testId: test.id, events: [{ subjectId: 's' }] },
      stranger,
    );
    expect(codeOf(result)).toBe('NOT_FOUND');
  });
});

describe('assignAbTestVariant', () => {
  it('answers the same variant for the same subject, the one the sticky rule picks', async () => {
    const test = await runningTest(t, operator, [
      { name: 'a', weight: 2 },
      { name: 'b', weight: 1 },
      { name: 'c', weight: 1 },
    ]);
    const first = await t.graphql(Assign, { testId: test.id, subjectId: 'alice' }, operator);
    const second = await t.graphql(Assign, { testId: test.id, subjectId: 'alice' }, operator);
    const weighted = test.variantIds.map((id, i) => ({ id, weight: i === 0 ? 2 : 1 }));
    expect(first.data?.assignAbTestVariant).toEqual(second.data?.assignAbTestVariant);
    expect(first.data?.assignAbTestVariant.variantId).toBe(assignVariant(test.id, 'alice', weighted));
  });

  it('counts a subject once as an observation when assigned concurrently', async () => {
    const test = await runningTest(t, operator);
    const agent = await inTenant(['agent']);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => t.graphql(Assign, { testId: test.id, subjectId: 'bob' }, agent)),
    );
    expect(new Set(answers.map((answer) => answer.data?.assignAbTestVariant.variantId)).size).toBe(1);
    expect(await totals(test)).toEqual([1, 0]);
  });

  it('answers CONFLICT on a draft test', async () => {
    const test = await draftTest(t, operator);
    expect(codeOf(await t.graphql(Assign, { testId: test.id, subjectId: 'x' }, operator))).toBe('CONFLICT');
  });

  it('is forbidden to the member role', async () => {
    const test = await runningTest(t, operator);
    const member = await inTenant(['member']);
    expect(codeOf(await t.graphql(Assign, { testId: test.id, subjectId: 'x' }, member))).toBe('FORBIDDEN');
  });

  it('refuses a testId that is not a uuid with uuid_parsing at ["testId"]', async () => {
    const result = await t.graphql(Assign, { testId: 'nope', subjectId: 'x' }, operator);
    expect(detailOf(result)).toMatchObject([{ type: 'uuid_parsing', loc: ['testId'] }]);
  });
});

describe('recordAbTestConversion', () => {
  it('converts an assigned subject once, however often it is reported', async () => {
    const test = await runningTest(t, operator);
    const assigned = await t.graphql(Assign, { testId: test.id, subjectId: 'carol' }, operator);
    const first = await t.graphql(Convert, { testId: test.id, subjectId: 'carol' }, operator);
    await t.graphql(Convert, { testId: test.id, subjectId: 'carol' }, operator);
    expect(first.data?.recordAbTestConversion).toMatchObject({
      variantId: assigned.data?.assignAbTestVariant.variantId,
      converted: true,
      convertedAt: expect.any(String),
    });
    const total = await totals(test);
    expect(total).toEqual([1, 1]);
  });

  it('assigns and observes a subject seen for the first time at its conversion', async () => {
    const test = await runningTest(t, operator);
    const agent = await inTenant(['agent']);
    const result = await t.graphql(Convert, { testId: test.id, subjectId: 'dave' }, agent);
    const index = test.variantIds.indexOf(result.data?.recordAbTestConversion.variantId ?? '');
    const expected = [
      [0, 0],
      [0, 0],
    ];
    expected[index] = [1, 1];
    expect(await counts(test)).toEqual(expected);
  });

  it('answers CONFLICT on a completed test', async () => {
    const test = await runningTest(t, operator);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect(codeOf(await t.graphql(Convert, { testId: test.id, subjectId: 'x' }, operator))).toBe('CONFLICT');
  });
});
