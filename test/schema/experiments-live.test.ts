import { describe, expect, it } from 'vitest';
import { RESULTS_ANNOUNCE_INTERVAL_MS } from '../../src/domain/experiments/announcements.js';
import type { BusEvent } from '../../src/events/topics.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind } from '../support/database.js';
import { serveTestAppAndCaller } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';
import { type BusWatch, watchBus } from './agents-support.js';
import {
  CompleteAbTest,
  type CreatedTest,
  draftTest,
  RecordAbTestEvents,
  runningTest,
  StartAbTest,
} from './experiments-support.js';

const ResultsChanged = graphql(`
  subscription ExperimentsResultsChanged($testId: ID!, $after: ID) {
    abTestResultsChanged(testId: $testId, after: $after) {
      eventId
      testId
      name
      status
      changedAt
      results {
        testId
        status
        chiSquaredPValue
        significant
        variants {
          variantId
          observations
          successes
        }
      }
    }
  }
`);

const TenantEvents = graphql(`
  subscription ExperimentsTenantEvents($types: [EventType!]) {
    events(types: $types) {
      __typename
      ... on AbTestResultsChangedEvent {
        testId
        status
        results {
          variants {
            observations
          }
        }
      }
    }
  }
`);

interface Payload {
  test_id: string;
  status: string;
  changed_at: string;
  variants: { id: string; observations: number; successes: number }[];
}

const payloadOf = (event: BusEvent) => event.payload as unknown as Payload;
const observed = (payload: Record<string, unknown>) =>
  (payload as unknown as Payload).variants.map((variant) => variant.observations);

let t: TestApp;
let server: RunningServer;
let operator: Caller;

serveTestAppAndCaller(['operator'], (made) => ({ t, server, caller: operator } = made));

/** Records `count` new subjects per variant (`prefix`-variant-k), none converted. */
async function record(app: TestApp, test: CreatedTest, prefix: string, count: number, converted = false) {
  const events = test.variantIds.flatMap((variantId, index) =>
    Array.from({ length: count }, (_, k) => ({ subjectId: `${prefix}-${index}-${k}`, variantId, converted })),
  );
  const result = await app.graphql(RecordAbTestEvents, { testId: test.id, events }, operator);
  expect(result.errors).toBeUndefined();
}

/** The AB_TEST_RESULTS_CHANGED events of a test up to the first whose counts are `observations`. */
async function until(watch: BusWatch, test: CreatedTest, observations: number[]): Promise<Payload[]> {
  const seen: Payload[] = [];
  for (;;) {
    const event = payloadOf(await watch.next((payload) => payload.test_id === test.id));
    seen.push(event);
    if (JSON.stringify(observed(event as never)) === JSON.stringify(observations)) return seen;
  }
}

/** Watches the tenant's announcements from now on: those written before (the start's) were published first. */
async function watchAnnouncements(): Promise<BusWatch> {
  await t.app.services.relay.kick();
  return watchBus(t, 'AB_TEST_RESULTS_CHANGED', operator.tenantId);
}

/** As if the test's last announcement was made at `at` (an SQL expression of the database clock). */
const announcedAt = (test: CreatedTest, at: 'quiet' | 'now') =>
  at === 'quiet'
    ? t.db.prisma.$executeRaw`
        UPDATE ab_tests SET results_announced_at = now() - interval '1 minute', results_pending = false
        WHERE id = ${test.id}::uuid`
    : // A second ahead, so that the batches that follow surely fall within its interval.
      t.db.prisma.$executeRaw`
        UPDATE ab_tests SET results_announced_at = clock_timestamp() + interval '1 second'
        WHERE id = ${test.id}::uuid`;

const announcementsOf = async (test: CreatedTest) =>
  (
    await t.db.prisma.outboxEvent.findMany({
      where: { type: 'AB_TEST_RESULTS_CHANGED', payload: { path: ['test_id'], equals: test.id } },
    })
  ).length;

describe('AB_TEST_RESULTS_CHANGED on the bus', () => {
  it('announces a test that starts and one that completes, with the status and the counts', async () => {
    const test = await draftTest(t, operator);
    const watch = await watchAnnouncements();
    await t.graphql(StartAbTest, { id: test.id }, operator);
    expect(payloadOf(await watch.next())).toMatchObject({
      test_id: test.id,
      status: 'running',
      variants: [
        { id: test.variantIds[0], observations: 0, successes: 0 },
        { id: test.variantIds[1], observations: 0, successes: 0 },
      ],
    });
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    expect(payloadOf(await watch.next())).toMatchObject({ test_id: test.id, status: 'completed' });
    await watch.close();
  });

  it('announces what a batch wrote at once when the test was quiet', async () => {
    const test = await runningTest(t, operator);
    const watch = await watchAnnouncements();
    await announcedAt(test, 'quiet');
    await record(t, test, 'quiet', 3, true);
    expect(payloadOf(await watch.next())).toMatchObject({
      status: 'running',
      variants: [
        { observations: 3, successes: 3 },
        { observations: 3, successes: 3 },
      ],
    });
    await watch.close();
  });

  it('owes the batches recorded within the interval one announcement, written after it with the last counts', async () => {
    const test = await runningTest(t, operator);
    const watch = await watchAnnouncements();
    await announcedAt(test, 'now');
    const before = await announcementsOf(test);
    for (const batch of ['a', 'b', 'c', 'd']) await record(t, test, batch, 5);

    const events = await until(watch, test, [20, 20]);
    expect(events.map((event) => observed(event as never))).toEqual([[20, 20]]);
    expect(await announcementsOf(test)).toBe(before + 1);
    await watch.close();
  });

  it('never announces a test twice within the interval, and announces its last counts', async () => {
    const test = await runningTest(t, operator);
    const watch = await watchAnnouncements();
    for (let batch = 0; batch < 12; batch += 1) await record(t, test, `burst-${batch}`, 10);

    const events = await until(watch, test, [120, 120]);
    const times = events.map((event) => Date.parse(event.changed_at));
    for (let i = 1; i < times.length; i += 1) {
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(
        RESULTS_ANNOUNCE_INTERVAL_MS,
      );
    }
    expect(events.length).toBeLessThanOrEqual(12);
    await watch.close();
  });

  it('writes no announcement for a batch that changes no counter', async () => {
    const test = await runningTest(t, operator);
    await announcedAt(test, 'quiet');
    await record(t, test, 'once', 2);
    const before = await announcementsOf(test);
    await record(t, test, 'once', 2);
    expect(await announcementsOf(test)).toBe(before);
    const [row] = await t.db.prisma.$queryRaw<{ pending: boolean }[]>`
      SELECT results_pending AS pending FROM ab_tests WHERE id = ${test.id}::uuid`;
    expect(row?.pending).toBe(false);
  });
});

describe('abTestResultsChanged', () => {
  it('delivers the subscribed test’s results each time they change, and nothing of another test', async () => {
    const test = await runningTest(t, operator);
    const other = await runningTest(t, operator);
    const subscription = await subscribe(server.url, operator, ResultsChanged, { testId: test.id });
    await record(t, other, 'other', 4);
    await record(t, test, 'mine', 2, true);

    const { data, errors } = await subscription.next();
    expect(errors).toBeUndefined();
    expect(data?.abTestResultsChanged).toMatchObject({
      testId: test.id,
      name: 'Onboarding checklist',
      status: 'running',
      results: {
        testId: test.id,
        status: 'running',
        chiSquaredPValue: null,
        significant: false,
        variants: [
          { variantId: test.variantIds[0], observations: 2, successes: 2 },
          { variantId: test.variantIds[1], observations: 2, successes: 2 },
        ],
      },
    });
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    const completed = await subscription.next();
    expect(completed.data?.abTestResultsChanged).toMatchObject({ status: 'completed' });
    await subscription.close();
  });

  it('answers NOT_FOUND for a test of another tenant', async () => {
    const test = await runningTest(t, operator);
    const outsider = await t.caller(['operator']);
    const subscription = await subscribe(server.url, outsider, ResultsChanged, { testId: test.id });
    const result = await subscription.next();
    await subscription.close();
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('reaches the tenant’s events subscription as AbTestResultsChangedEvent', async () => {
    // A tenant of its own: the tests above leave trailing (coalesced) announcements of their tests, which
    // the shared tenant's stream would deliver first.
    const owner = await t.caller(['operator']);
    const test = await draftTest(t, owner);
    const subscription = await subscribe(server.url, owner, TenantEvents, {
      types: ['AB_TEST_RESULTS_CHANGED'],
    });
    expect((await subscription.next()).data?.events).toEqual({ __typename: 'EventStreamStarted' });
    await t.graphql(StartAbTest, { id: test.id }, owner);
    expect((await subscription.next()).data?.events).toEqual({
      __typename: 'AbTestResultsChangedEvent',
      testId: test.id,
      status: 'running',
      results: { variants: [{ observations: 0 }, { observations: 0 }] },
    });
    await subscription.close();
  });
});

describe('two instances on one database', () => {
  // PGlite is an embedded, single-process database; instances share events only through Redis.
  it.skipIf(databaseKind === 'pglite')(
    'coalesce the announcements of a test whichever instance records its batches',
    async () => {
      const database = await createTestDatabase();
      const a = await createTestApp({ database });
      const b = await createTestApp({ database });
      try {
        const test = await runningTest(a, operator);
        const watch = await watchBus(a, 'AB_TEST_RESULTS_CHANGED', operator.tenantId);
        for (let batch = 0; batch < 12; batch += 1) {
          await record(batch % 2 === 0 ? a : b, test, `fleet-${batch}`, 10);
        }
        const events = await until(watch, test, [120, 120]);
        const times = events.map((event) => Date.parse(event.changed_at));
        for (let i = 1; i < times.length; i += 1) {
          expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(
            RESULTS_ANNOUNCE_INTERVAL_MS,
          );
        }
        await watch.close();
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    },
  );
});
