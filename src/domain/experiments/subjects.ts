import type { Context } from '../../context.js';
import { conflict, invalidInput } from '../../errors.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { type EventOutcome, planEvents, type StoredSubject, type SubjectEvent } from './event-plan.js';
import { lockAbTest } from './lifecycle.js';

type AuthedContext = Context & { viewer: NonNullable<Context['viewer']> };

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

interface WrittenSubject {
  subject_id: string;
  variant_id: string;
  converted: boolean;
}

/**
 * Records exposures and conversions of subjects of a running test in one transaction: new subjects are
 * inserted (ON CONFLICT DO NOTHING), known ones converted (WHERE NOT converted), and the per-variant
 * counters grow by exactly the rows those statements report as written. A fixed number of statements
 * per call, whatever its size.
 */
export async function recordEvents(
  context: AuthedContext,
  testId: string,
  events: readonly SubjectEvent[],
): Promise<EventsReceipt> {
  return context.prisma.$transaction(async (tx) => {
    const variants = await lockRunningTest(tx, context.viewer.tenantId, testId);
    assertKnownVariants(variants, events);
    const stored = await storedSubjects(tx, testId, [...new Set(events.map((event) => event.subjectId))]);
    const plan = planEvents(testId, variants, stored, events);

    const inserted = await insertSubjects(tx, testId, plan.inserts);
    const converted = await convertSubjects(tx, testId, plan.conversions);
    await addToCounters(tx, testId, inserted, converted);

    return receipt(plan.outcomes, inserted, converted);
  }, EVENT_TRANSACTION);
}

/**
 * The subject's variant, assigned by the sticky rule on first sight (which counts as its observation). A
 * subject already assigned in a running test is answered from a plain read, without taking the test lock.
 */
export async function assignSubject(
  context: AuthedContext,
  testId: string,
  subjectId: string,
): Promise<SubjectAssignment> {
  const known = await findAssignment(context, testId, subjectId);
  if (known?.status === 'running') return known.assignment;
  await recordEvents(context, testId, [{ subjectId, converted: false }]);
  return readAssignment(context, testId, subjectId);
}

/** Counts the subject's conversion once; a subject not seen before is assigned and observed first. */
export async function convertSubject(
  context: AuthedContext,
  testId: string,
  subjectId: string,
): Promise<SubjectAssignment> {
  await recordEvents(context, testId, [{ subjectId, converted: true }]);
  return readAssignment(context, testId, subjectId);
}

async function findAssignment(context: AuthedContext, testId: string, subjectId: string) {
  const subject = await context.prisma.abTestSubject.findFirst({
    where: { testId, subjectId, test: { tenantId: context.viewer.tenantId } },
    include: { variant: { select: { name: true } }, test: { select: { status: true } } },
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
  return { status: subject.test.status, assignment };
}

async function readAssignment(
  context: AuthedContext,
  testId: string,
  subjectId: string,
): Promise<SubjectAssignment> {
  const found = await findAssignment(context, testId, subjectId);
  if (!found) throw new Error(`subject ${subjectId} of A/B test ${testId} vanished after it was recorded`);
  return found.assignment;
}

async function lockRunningTest(
  tx: Prisma.TransactionClient,
  tenantId: string,
  testId: string,
): Promise<VariantRow[]> {
  const test = await lockAbTest(tx, tenantId, testId);
  if (test.status !== 'running') {
    throw conflict(`A/B test ${testId} is ${test.status}; events are accepted only while it is running`);
  }
  return tx.abTestVariant.findMany({
    where: { testId },
    orderBy: { position: 'asc' },
    select: { id: true, weight: true },
  });
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
  const rows = await tx.$queryRaw<WrittenSubject[]>`
    SELECT subject_id, variant_id::text AS variant_id, converted FROM ab_test_subjects
    WHERE test_id = ${testId}::uuid
      AND subject_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(subjectIds)}::jsonb))`;
  return new Map(
    rows.map((row) => [row.subject_id, { variantId: row.variant_id, converted: row.converted }]),
  );
}

async function insertSubjects(
  tx: Prisma.TransactionClient,
  testId: string,
  subjects: { subjectId: string; variantId: string; converted: boolean }[],
): Promise<WrittenSubject[]> {
  if (subjects.length === 0) return [];
  const rows = subjects.map((s) => ({
    subject_id: s.subjectId,
    variant_id: s.variantId,
    converted: s.converted,
  }));
  return tx.$queryRaw<WrittenSubject[]>`
    INSERT INTO ab_test_subjects (test_id, subject_id, variant_id, converted, converted_at)
    SELECT ${testId}::uuid, e.subject_id, e.variant_id, e.converted, CASE WHEN e.converted THEN now() END
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS e(subject_id text, variant_id uuid, converted boolean)
    ORDER BY e.subject_id
    ON CONFLICT (test_id, subject_id) DO NOTHING
    RETURNING subject_id, variant_id::text AS variant_id, converted`;
}

async function convertSubjects(
  tx: Prisma.TransactionClient,
  testId: string,
  subjectIds: string[],
): Promise<WrittenSubject[]> {
  if (subjectIds.length === 0) return [];
  return tx.$queryRaw<WrittenSubject[]>`
    UPDATE ab_test_subjects SET converted = true, converted_at = now()
    WHERE test_id = ${testId}::uuid AND NOT converted
      AND subject_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(subjectIds)}::jsonb))
    RETURNING subject_id, variant_id::text AS variant_id, converted`;
}

async function addToCounters(
  tx: Prisma.TransactionClient,
  testId: string,
  inserted: readonly WrittenSubject[],
  converted: readonly WrittenSubject[],
): Promise<void> {
  const deltas = new Map<string, { id: string; observations: number; successes: number }>();
  const deltaOf = (id: string) => {
    const delta = deltas.get(id) ?? { id, observations: 0, successes: 0 };
    deltas.set(id, delta);
    return delta;
  };
  for (const row of inserted) {
    const delta = deltaOf(row.variant_id);
    delta.observations += 1;
    if (row.converted) delta.successes += 1;
  }
  for (const row of converted) deltaOf(row.variant_id).successes += 1;
  if (deltas.size === 0) return;
  await tx.$executeRaw`
    UPDATE ab_test_variants AS v
    SET observations = v.observations + d.observations, successes = v.successes + d.successes
    FROM jsonb_to_recordset(${JSON.stringify([...deltas.values()])}::jsonb) AS d(id uuid, observations int, successes int)
    WHERE v.id = d.id AND v.test_id = ${testId}::uuid`;
}

function receipt(
  outcomes: readonly EventOutcome[],
  inserted: readonly WrittenSubject[],
  converted: readonly WrittenSubject[],
): EventsReceipt {
  const count = (...kinds: EventOutcome[]) => outcomes.filter((outcome) => kinds.includes(outcome)).length;
  return {
    received: outcomes.length,
    newObservations: inserted.length,
    newSuccesses: inserted.filter((row) => row.converted).length + converted.length,
    repeats: count('repeat', 'variant_mismatch'),
    variantMismatches: count('variant_mismatch'),
  };
}
