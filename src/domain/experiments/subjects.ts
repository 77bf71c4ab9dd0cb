import type { Prisma } from '../../generated/prisma/client.js';
import type { Logger } from '../../logger.js';
import type { Actor } from '../actor.js';
import { conflict, invalidInput } from '../errors.js';
import { resultsChanged, settleResults } from './announcements.js';
import {
  type EventOutcome,
  type EventPlan,
  planEvents,
  type StoredSubject,
  type SubjectEvent,
} from './event-plan.js';
import { type AbTestStatus, abTestNotFound } from './lifecycle.js';

export const MAX_EVENTS_PER_CALL = 1000;

// A call waits for the writers of the same test ahead of it; a full batch takes well under a second.
const EVENT_TRANSACTION = { maxWait: 15_000, timeout: 30_000 };

export interface EventsReceipt {
  received: number;
  /** Subjects counted as an observation for the first time. */
  newObservations: number;
  /** Subjects counted as a success for the first time. */
  newSuccesses: number;
  /** Events that changed nothing, variant mismatches included. */
  repeats: number;
  /** Events ignored because they named another variant than the subject's first assignment. */
  variantMismatches: number;
}

export interface SubjectAssignment {
  testId: string;
  subjectId: string;
  variantId: string;
  variantName: string;
  converted: boolean;
  assignedAt: Date;
  convertedAt: Date | null;
}

interface VariantRow {
  id: string;
  weight: number;
}

/**
 * Records exposures and conversions of subjects of a running test in one transaction of three statements,
 * whatever its size: a read of the batch's known subjects, the test lock (with the variants), then one
 * statement that inserts the new subjects (ON CONFLICT DO NOTHING), converts the known ones (WHERE NOT
 * converted) and grows the per-variant counters by exactly the rows those two report as written. A batch
 * that changed the counters adds one short statement: the test's results announcement, written at once or
 * owed for a fraction of a second (announcements.ts), so results events are coalesced per test.
 *
 * Writers of a test wait for one another on its lock, so the time from the lock to the commit bounds the
 * test's ingestion rate; the read is therefore made before the lock, and the plan checked by the write
 * itself. Only a writer that committed between the read and the lock can have changed what the plan
 * relied on: it inserted a subject planned as new (the insert then skips it) or converted one planned
 * for conversion (the update then skips it). Either shows as fewer rows written than planned; the batch is
 * then rolled back and applied again with the read after the lock (`recordEventsLocked`), which nothing
 * can overtake.
 */
export async function recordEvents(
  context: Actor,
  logger: Logger,
  testId: string,
  events: readonly SubjectEvent[],
): Promise<EventsReceipt> {
  const subjectIds = [...new Set(events.map((event) => event.subjectId))];
  let recorded: Recorded;
  try {
    recorded = await context.prisma.$transaction(async (tx) => {
      const stored = await storedSubjects(tx, testId, subjectIds);
      const variants = await lockRunningTest(tx, context.viewer.tenantId, testId);
      assertKnownVariants(variants, events);
      const plan = planEvents(testId, variants, stored, events);
      const written = await applyPlan(tx, testId, variants, plan);
      if (written.inserted !== plan.inserts.length || written.converted !== plan.conversions.length) {
        throw new PlanOvertaken();
      }
      return recordedBatch(tx, context, testId, plan, written);
    }, EVENT_TRANSACTION);
  } catch (error) {
    if (!(error instanceof PlanOvertaken)) throw error;
    recorded = await recordEventsLocked(context, testId, subjectIds, events);
  }
  if (recorded.announceInMs !== null) {
    settleResults(context.prisma, logger, context.viewer.tenantId, testId, recorded.announceInMs);
  }
  return recorded.receipt;
}

interface Recorded {
  receipt: EventsReceipt;
  /** Milliseconds until the results announcement this batch owes may be written; null when none is owed. */
  announceInMs: number | null;
}

/** The receipt of a written batch, with the announcement of the results it changed (announcements.ts). */
async function recordedBatch(
  tx: Prisma.TransactionClient,
  context: Actor,
  testId: string,
  plan: EventPlan,
  written: Written,
): Promise<Recorded> {
  const changed = written.inserted + written.converted > 0;
  return {
    receipt: receipt(plan.outcomes, written),
    announceInMs: changed ? await resultsChanged(tx, context.viewer.tenantId, testId) : null,
  };
}

/** A writer of the same test committed between a batch's read and its lock, changing what it read. */
class PlanOvertaken extends Error {}

/** `recordEvents` with the read after the lock: it sees what the writer before this one committed. */
function recordEventsLocked(
  context: Actor,
  testId: string,
  subjectIds: string[],
  events: readonly SubjectEvent[],
): Promise<Recorded> {
  return context.prisma.$transaction(async (tx) => {
    const variants = await lockRunningTest(tx, context.viewer.tenantId, testId);
    assertKnownVariants(variants, events);
    const stored = await storedSubjects(tx, testId, subjectIds);
    const plan = planEvents(testId, variants, stored, events);
    const written = await applyPlan(tx, testId, variants, plan);
    return recordedBatch(tx, context, testId, plan, written);
  }, EVENT_TRANSACTION);
}

/**
 * The subject's variant, assigned by the sticky rule on first sight (which counts as its observation). A
 * subject already assigned in a running test is answered from a plain read, without taking the test lock.
 */
export async function assignSubject(
  context: Actor,
  logger: Logger,
  testId: string,
  subjectId: string,
): Promise<SubjectAssignment> {
  const known = await findAssignment(context, testId, subjectId);
  if (known?.status === 'running') return known.assignment;
  await recordEvents(context, logger, testId, [{ subjectId, converted: false }]);
  return readAssignment(context, testId, subjectId);
}

/** Counts the subject's conversion once; a subject not seen before is assigned and observed first. */
export async function convertSubject(
  context: Actor,
  logger: Logger,
  testId: string,
  subjectId: string,
): Promise<SubjectAssignment> {
  await recordEvents(context, logger, testId, [{ subjectId, converted: true }]);
  return readAssignment(context, testId, subjectId);
}

async function findAssignment(context: Actor, testId: string, subjectId: string) {
  const subject = await context.prisma.abTestSubject.findFirst({
    where: { testId, subjectId, variant: { test: { tenantId: context.viewer.tenantId } } },
    include: { variant: { select: { name: true, test: { select: { status: true } } } } },
  });
  if (!subject) return null;
  const assignment: SubjectAssignment = {
    testId,
    subjectId,
    variantId: subject.variantId,
    variantName: subject.variant.name,
    converted: subject.converted,
    assignedAt: subject.assignedAt,
    convertedAt: subject.convertedAt,
  };
  return { status: subject.variant.test.status, assignment };
}

async function readAssignment(context: Actor, testId: string, subjectId: string): Promise<SubjectAssignment> {
  const found = await findAssignment(context, testId, subjectId);
  if (!found) throw new Error(`subject ${subjectId} of A/B test ${testId} vanished after it was recorded`);
  return found.assignment;
}

/** Locks the running test of the caller's tenant (see lockAbTest) and reads its variants, in one statement. */
async function lockRunningTest(
  tx: Prisma.TransactionClient,
  tenantId: string,
  testId: string,
): Promise<VariantRow[]> {
  const rows = await tx.$queryRaw<{ status: AbTestStatus; id: string | null; weight: number | null }[]>`
    WITH test AS (
      SELECT id, status::text AS status FROM ab_tests
      WHERE id = ${testId}::uuid AND tenant_id = ${tenantId}::uuid
      FOR NO KEY UPDATE
    )
    SELECT test.status, v.id::text AS id, v.weight
    FROM test LEFT JOIN ab_test_variants AS v ON v.test_id = test.id
    ORDER BY v.position`;
  const status = rows[0]?.status;
  if (!status) throw abTestNotFound(testId);
  if (status !== 'running') {
    throw conflict(`A/B test ${testId} is ${status}; events are accepted only while it is running`);
  }
  return rows.flatMap((row) =>
    row.id === null || row.weight === null ? [] : [{ id: row.id, weight: row.weight }],
  );
}

function assertKnownVariants(variants: readonly VariantRow[], events: readonly SubjectEvent[]): void {
  const ids = new Set(variants.map((variant) => variant.id));
  const detail = events.flatMap((event, index) =>
    event.variantId == null || ids.has(event.variantId)
      ? []
      : [
          {
            type: 'value_error',
            loc: ['events', index, 'variantId'],
            msg: 'Value error, not a variant of this A/B test',
            input: event.variantId,
            ctx: { error: 'not a variant of this A/B test' },
          },
        ],
  );
  if (detail.length > 0) throw invalidInput(detail);
}

async function storedSubjects(
  tx: Prisma.TransactionClient,
  testId: string,
  subjectIds: string[],
): Promise<Map<string, StoredSubject>> {
  if (subjectIds.length === 0) return new Map();
  // Each id probes the primary key once, whatever the planner believes of the test's size: LATERAL with
  // LIMIT 1 leaves it no other plan. A plain join on the unnested ids was planned as a hash join over every
  // subject of the test whenever the table had no statistics yet (autovacuum off, or a young table), so
  // each batch read the whole test and ingestion slowed as the test grew.
  const rows = await tx.$queryRaw<{ subject_id: string; variant_id: string; converted: boolean }[]>`
    SELECT s.subject_id, s.variant_id::text AS variant_id, s.converted
    FROM json_array_elements_text(${JSON.stringify(subjectIds)}::json) AS q(subject_id)
    CROSS JOIN LATERAL (
      SELECT subject_id, variant_id, converted FROM ab_test_subjects
      WHERE test_id = ${testId}::uuid AND subject_id = q.subject_id
      LIMIT 1
    ) AS s`;
  return new Map(
    rows.map((row) => [row.subject_id, { variantId: row.variant_id, converted: row.converted }]),
  );
}

/** What applyPlan wrote. */
interface Written {
  inserted: number;
  /** Of the inserted subjects, those inserted as converted. */
  insertedConverted: number;
  converted: number;
}

/**
 * Writes a plan in one statement. Its parts share one snapshot, which is safe here: the inserted and the
 * converted subjects are disjoint sets (planEvents), and the counters grow by what the two report written.
 */
async function applyPlan(
  tx: Prisma.TransactionClient,
  testId: string,
  variants: readonly VariantRow[],
  plan: EventPlan,
): Promise<Written> {
  if (plan.inserts.length === 0 && plan.conversions.length === 0) {
    return { inserted: 0, insertedConverted: 0, converted: 0 };
  }
  // Each column is one text parameter: Prisma serializes, copies and checks an array parameter element by
  // element, several times over, and most of the variant ids would be the same few uuids again and again.
  const positions = new Map(variants.map((variant, index) => [variant.id, index + 1]));
  const subjectIds: string[] = [];
  const variantPositions: number[] = [];
  const converted: string[] = [];
  for (const subject of plan.inserts) {
    const position = positions.get(subject.variantId);
    if (position === undefined) throw new Error(`variant ${subject.variantId} is not one of test ${testId}`);
    subjectIds.push(subject.subjectId);
    variantPositions.push(position);
    converted.push(subject.converted ? 't' : 'f');
  }
  const [row] = await tx.$queryRaw<Written[]>`
    WITH inserted AS (
      INSERT INTO ab_test_subjects (test_id, subject_id, variant_id, converted, converted_at)
      SELECT ${testId}::uuid, e.subject_id, (${variants.map((variant) => variant.id)}::uuid[])[e.variant],
             e.converted, CASE WHEN e.converted THEN now() END
      FROM ROWS FROM (
        json_array_elements_text(${JSON.stringify(subjectIds)}::json),
        unnest(${`{${variantPositions.join(',')}}`}::int[]),
        unnest(${`{${converted.join(',')}}`}::boolean[])
      ) AS e(subject_id, variant, converted)
      ON CONFLICT (test_id, subject_id) DO NOTHING
      RETURNING variant_id, converted
    ), converted AS (
      -- Found by one probe of the key each, then updated by row address (see storedSubjects): no other
      -- transaction writes the test's subjects while this one holds the test's lock.
      UPDATE ab_test_subjects AS s SET converted = true, converted_at = now()
      FROM json_array_elements_text(${JSON.stringify(plan.conversions)}::json) AS c(subject_id)
      CROSS JOIN LATERAL (
        SELECT ctid AS row FROM ab_test_subjects
        WHERE test_id = ${testId}::uuid AND subject_id = c.subject_id
        LIMIT 1
      ) AS k
      WHERE s.ctid = k.row AND NOT s.converted
      RETURNING s.variant_id
    ), deltas AS (
      SELECT variant_id, count(*) FILTER (WHERE observed)::int AS observations,
             count(*) FILTER (WHERE success)::int AS successes
      FROM (SELECT variant_id, true AS observed, converted AS success FROM inserted
            UNION ALL SELECT variant_id, false, true FROM converted) AS w
      GROUP BY variant_id
    ), counted AS (
      UPDATE ab_test_variants AS v
      SET observations = v.observations + d.observations, successes = v.successes + d.successes
      FROM deltas AS d WHERE v.id = d.variant_id AND v.test_id = ${testId}::uuid
      RETURNING v.id
    )
    SELECT (SELECT count(*) FROM inserted)::int AS "inserted",
           (SELECT count(*) FROM inserted WHERE converted)::int AS "insertedConverted",
           (SELECT count(*) FROM converted)::int AS "converted",
           (SELECT count(*) FROM counted)::int AS "counted"`;
  if (!row) throw new Error(`writing the events of A/B test ${testId} returned no row`);
  return { inserted: row.inserted, insertedConverted: row.insertedConverted, converted: row.converted };
}

function receipt(outcomes: readonly EventOutcome[], written: Written): EventsReceipt {
  let repeats = 0;
  let variantMismatches = 0;
  for (const outcome of outcomes) {
    if (outcome === 'repeat') repeats += 1;
    else if (outcome === 'variant_mismatch') {
      repeats += 1;
      variantMismatches += 1;
    }
  }
  return {
    received: outcomes.length,
    newObservations: written.inserted,
    newSuccesses: written.insertedConverted + written.converted,
    repeats,
    variantMismatches,
  };
}
