import { recordAudit } from '../../audit.js';
import type { AbTest, Prisma } from '../../generated/prisma/client.js';
import type { AbTestStatus } from '../../generated/prisma/enums.js';
import type { Actor } from '../actor.js';
import { conflict, notFound } from '../errors.js';
import { announceResults } from './announcements.js';
import { type AbTestAnalysis, type ExperimentResults, summarizeExperiment } from './results.js';

export type { AbTestStatus };

export interface NewAbTest {
  name: string;
  /** The first is the control. */
  variants: { name: string; weight: number }[];
  alpha: number;
  analysis: AbTestAnalysis;
}

export const abTestNotFound = (id: string) => notFound(`A/B test ${id} not found`);

/**
 * Locks the test row of the caller's tenant for the rest of the transaction. Every writer of a test
 * (transitions and events) takes this lock first, so writers of one test never deadlock on subject or
 * counter rows, and no event is counted after the test completes.
 */
export async function lockAbTest(
  tx: Prisma.TransactionClient,
  tenantId: string,
  testId: string,
): Promise<{ id: string; status: AbTestStatus }> {
  const [row] = await tx.$queryRaw<{ id: string; status: AbTestStatus }[]>`
    SELECT id::text, status::text FROM ab_tests
    WHERE id = ${testId}::uuid AND tenant_id = ${tenantId}::uuid
    FOR NO KEY UPDATE`;
  if (!row) throw abTestNotFound(testId);
  return row;
}

export async function createAbTest(context: Actor, input: NewAbTest): Promise<AbTest> {
  return context.prisma.$transaction(async (tx) => {
    const test = await tx.abTest.create({
      data: {
        tenantId: context.viewer.tenantId,
        name: input.name,
        alpha: input.alpha,
        analysis: input.analysis,
        createdBy: context.viewer.sub,
        variants: {
          create: input.variants.map((variant, position) => ({
            name: variant.name,
            weight: variant.weight,
            position,
          })),
        },
      },
    });
    await recordAudit(tx, context, {
      action: 'ab_test.create',
      targetType: 'ab_test',
      targetId: test.id,
      outcome: 'created',
      details: { name: input.name, alpha: input.alpha, analysis: input.analysis, variants: input.variants },
    });
    return test;
  });
}

interface Transition {
  action: string;
  from: AbTestStatus;
  to: AbTestStatus;
  stamp: 'startedAt' | 'completedAt';
}

const transitions = {
  start: { action: 'ab_test.start', from: 'draft', to: 'running', stamp: 'startedAt' },
  complete: { action: 'ab_test.complete', from: 'running', to: 'completed', stamp: 'completedAt' },
} satisfies Record<string, Transition>;

/**
 * Moves a test along draft → running → completed. Repeating the move a test already made answers the
 * test unchanged; any other move is a conflict.
 */
export async function moveAbTest(
  context: Actor,
  testId: string,
  move: keyof typeof transitions,
): Promise<AbTest> {
  const transition: Transition = transitions[move];
  return context.prisma.$transaction(async (tx) => {
    const locked = await lockAbTest(tx, context.viewer.tenantId, testId);
    const audit = { action: transition.action, targetType: 'ab_test', targetId: testId };
    if (locked.status === transition.to) {
      await recordAudit(tx, context, { ...audit, outcome: `already_${transition.to}` });
      return tx.abTest.findUniqueOrThrow({ where: { id: testId } });
    }
    if (locked.status !== transition.from) {
      throw conflict(
        `A/B test ${testId} is ${locked.status}; only a ${transition.from} test can be moved to ${transition.to}`,
      );
    }
    const test = await tx.abTest.update({
      where: { id: testId },
      data: { status: transition.to, [transition.stamp]: new Date() },
    });
    await recordAudit(tx, context, { ...audit, outcome: transition.to });
    // A test that starts or completes changes what its results say (and whether a dashboard lists it).
    await announceResults(tx, context.viewer.tenantId, testId);
    return test;
  });
}

/** A test of the caller's tenant, or 404. */
export async function findAbTest(context: Actor, testId: string): Promise<AbTest> {
  const test = await context.prisma.abTest.findFirst({
    where: { id: testId, tenantId: context.viewer.tenantId },
  });
  if (!test) throw abTestNotFound(testId);
  return test;
}

export interface AbTestResults extends ExperimentResults {
  testId: string;
  status: AbTestStatus;
}

/** Results from the per-variant counters: two indexed reads, whatever the number of subjects. */
export async function abTestResults(context: Actor, testId: string): Promise<AbTestResults> {
  const test = await context.prisma.abTest.findFirst({
    where: { id: testId, tenantId: context.viewer.tenantId },
    include: { variants: { orderBy: { position: 'asc' } } },
  });
  if (!test) throw abTestNotFound(testId);
  return {
    testId: test.id,
    status: test.status,
    ...summarizeExperiment(test.variants, test.alpha, {
      analysis: test.analysis,
      ended: test.status === 'completed',
      storedState: test.sequentialState,
    }),
  };
}
