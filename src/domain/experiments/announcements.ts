import type { PrismaClient } from '../../db/client.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { AbTestStatus } from '../../generated/prisma/enums.js';
import type { Logger } from '../../logger.js';
import { type AbTestAnalysis, sequentialLook } from './results.js';
import type { SequentialState } from './sequential.js';

/**
 * Shortest time between two AB_TEST_RESULTS_CHANGED events of one test: at most four a second per test,
 * however many instances record its events and however fast.
 */
export const RESULTS_ANNOUNCE_INTERVAL_MS = 250;

/** The AB_TEST_RESULTS_CHANGED payload: what the results are computed from, so no reader queries again. */
export interface AbTestResultsPayload {
  test_id: string;
  name: string;
  status: AbTestStatus;
  alpha: number;
  /** Absent from events written before tests had an analysis: those were all `fixed_horizon`. */
  analysis?: AbTestAnalysis;
  /** When the counters were read, in the transaction that wrote the event. */
  changed_at: string;
  /** Control first. */
  variants: { id: string; name: string; weight: number; observations: number; successes: number }[];
  /**
   * The sequential state stored with these counts (one entry per non-control variant), so that readers show
   * the running figures. Absent from events written before it was kept.
   */
  sequential_state?: (SequentialState | null)[];
}

const INTERVAL = `${RESULTS_ANNOUNCE_INTERVAL_MS} milliseconds`;

/**
 * Writes an AB_TEST_RESULTS_CHANGED event with the test's counters as they are in `tx`, which holds the
 * test's lock (see lockAbTest), and marks the test announced now.
 */
export async function announceResults(
  tx: Prisma.TransactionClient,
  tenantId: string,
  testId: string,
): Promise<void> {
  const [test] = await tx.$queryRaw<
    {
      name: string;
      status: AbTestStatus;
      alpha: number;
      analysis: AbTestAnalysis;
      sequential_state: unknown;
      changed_at: Date;
    }[]
  >`
    UPDATE ab_tests SET results_announced_at = clock_timestamp(), results_pending = false
    WHERE id = ${testId}::uuid AND tenant_id = ${tenantId}::uuid
    RETURNING name, status::text AS status, alpha, analysis::text AS analysis, sequential_state,
      results_announced_at AS changed_at`;
  if (!test) throw new Error(`A/B test ${testId} vanished while it was locked`);
  const variants = await tx.abTestVariant.findMany({
    where: { testId },
    orderBy: { position: 'asc' },
    select: { id: true, name: true, weight: true, observations: true, successes: true },
  });
  // Every announcement is a look the sequential state remembers: once a comparison was significant at
  // one, it stays so at every later read, however the counts move after it.
  const { state } = sequentialLook(variants, test.alpha, {
    ended: test.status === 'completed',
    storedState: test.sequential_state,
  });
  await tx.$executeRaw`
    UPDATE ab_tests SET sequential_state = ${JSON.stringify(state)}::jsonb WHERE id = ${testId}::uuid`;
  const payload: AbTestResultsPayload = {
    test_id: testId,
    name: test.name,
    status: test.status,
    alpha: test.alpha,
    analysis: test.analysis,
    changed_at: test.changed_at.toISOString(),
    variants,
    sequential_state: state,
  };
  await enqueueEvent(tx, {
    type: 'AB_TEST_RESULTS_CHANGED',
    tenantId,
    payload: payload as unknown as Record<string, unknown>,
  });
}

/**
 * Called by a writer that changed a test's counters, in its transaction, holding the test's lock. The
 * first change after a quiet interval is announced at once; a change within the interval of the last
 * announcement only marks the test as owing one, and the answer is how many milliseconds remain until it
 * may be written (`settleResults` then writes it). Writers of a test queue on its lock, so the decision is
 * the same whichever instance makes it: coalescing holds across instances.
 */
export async function resultsChanged(
  tx: Prisma.TransactionClient,
  tenantId: string,
  testId: string,
): Promise<number | null> {
  const [row] = await tx.$queryRawUnsafe<{ due: boolean; wait_ms: number }[]>(
    `UPDATE ab_tests SET results_pending = true WHERE id = $1::uuid
     RETURNING results_announced_at IS NULL OR results_announced_at <= clock_timestamp() - interval '${INTERVAL}' AS due,
       greatest(0, ceil(extract(epoch FROM results_announced_at + interval '${INTERVAL}' - clock_timestamp()) * 1000))::int AS wait_ms`,
    testId,
  );
  if (!row) throw new Error(`A/B test ${testId} vanished while it was locked`);
  if (!row.due) return row.wait_ms;
  await announceResults(tx, tenantId, testId);
  return null;
}

/** Timers of owed announcements, per database and test: one per test on an instance. */
const owed = new WeakMap<PrismaClient, Map<string, NodeJS.Timeout>>();

/**
 * After a commit that left the test owing an announcement: writes it once `waitMs` have passed, unless a
 * writer (on any instance) announced the test meanwhile. Should this instance stop first, the test's next
 * change announces it (reads of `abTestResults` are current whatever happens here).
 */
export function settleResults(
  prisma: PrismaClient,
  logger: Logger,
  tenantId: string,
  testId: string,
  waitMs: number,
): void {
  let timers = owed.get(prisma);
  if (!timers) {
    timers = new Map();
    owed.set(prisma, timers);
  }
  if (timers.has(testId)) return;
  const timer = setTimeout(() => {
    timers.delete(testId);
    settle(prisma, tenantId, testId).then(
      (again) => {
        if (again !== null) settleResults(prisma, logger, tenantId, testId, again);
      },
      (error: unknown) =>
        logger.warn(
          { err: error, testId },
          'A/B results not announced; the next change of the test announces them',
        ),
    );
  }, waitMs);
  timer.unref();
  timers.set(testId, timer);
}

/** Writes the owed announcement if it is due; else answers the milliseconds until it is, or null if none is owed. */
function settle(prisma: PrismaClient, tenantId: string, testId: string): Promise<number | null> {
  return prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRawUnsafe<{ pending: boolean; due: boolean; wait_ms: number }[]>(
      `SELECT results_pending AS pending,
         results_announced_at IS NULL OR results_announced_at <= clock_timestamp() - interval '${INTERVAL}' AS due,
         greatest(0, ceil(extract(epoch FROM results_announced_at + interval '${INTERVAL}' - clock_timestamp()) * 1000))::int AS wait_ms
       FROM ab_tests WHERE id = $1::uuid AND tenant_id = $2::uuid
       FOR NO KEY UPDATE`,
      testId,
      tenantId,
    );
    if (!row?.pending) return null;
    if (!row.due) return row.wait_ms;
    await announceResults(tx, tenantId, testId);
    return null;
  });
}
