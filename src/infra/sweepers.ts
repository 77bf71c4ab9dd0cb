import type { PrismaClient } from '../db/client.js';
import { sweepExpiredLeases } from '../domain/agents/lease-sweeper.js';
import { expireTaskApprovals } from '../domain/agents/task-approvals.js';
import { expireStepContent } from '../domain/agents/task-steps.js';
import { expireCallApprovals } from '../domain/connectors/call-approvals-store.js';
import { evaluateCanaries } from '../domain/finetuning/canary-rollout.js';
import { tickRoutines } from '../domain/routines/tick.js';
import type { Logger } from '../logger.js';
import { sweepIdempotencyKeys } from './idempotency-store.js';
import { runPeriodically } from './periodic.js';

/** What every sweeper runs with; each has its own default interval. */
export interface SweeperOptions {
  prisma: PrismaClient;
  logger: Logger;
  intervalMs?: number;
}

/** Runs `sweepExpiredLeases` in the background (default every 30 s); returns the function that stops it. */
export function startLeaseSweeper({
  prisma,
  logger,
  intervalMs = 30_000,
}: SweeperOptions): () => Promise<void> {
  return runPeriodically(
    async () => {
      await sweepExpiredLeases(prisma, logger);
    },
    { intervalMs, logger, failure: 'lease sweep failed' },
  );
}

/**
 * Expires waiting requests nobody decided in time, gated calls and tasks' decision requests alike, whether
 * or not their approvers are still around (default every 30 s).
 */
export function startApprovalSweeper({
  prisma,
  logger,
  intervalMs = 30_000,
}: SweeperOptions): () => Promise<void> {
  return runPeriodically(
    async () => {
      await expireCallApprovals(prisma);
      await expireTaskApprovals(prisma);
    },
    { intervalMs, logger, failure: 'approval expiry sweep failed' },
  );
}

/** Runs `evaluateCanaries` in the background (default every 5 s); returns the function that stops it. */
export function startCanaryAnalysis({ prisma, logger, intervalMs = 5_000 }: SweeperOptions) {
  return runPeriodically(
    async () => {
      for (const decision of await evaluateCanaries(prisma)) logger.info(decision, 'canary decision');
    },
    { intervalMs, logger, failure: 'canary analysis failed' },
  );
}

/**
 * Runs `tickRoutines` in the background (default every 500 ms, ROUTINE_TICK_INTERVAL_MS): one indexed query
 * while nothing is due; every instance may run it, each occurrence is handled once.
 */
export function startRoutineTicker({ prisma, logger, intervalMs = 500 }: SweeperOptions) {
  return runPeriodically(
    async () => {
      const report = await tickRoutines(prisma);
      if (report.queued + report.skipped + report.missed > 0) logger.debug(report, 'routine tick');
    },
    { intervalMs, logger, failure: 'routine tick failed' },
  );
}

/** Deletes expired idempotency keys (default every 10 min); reads ignore them before that. */
export function startIdempotencySweeper({ prisma, logger, intervalMs = 600_000 }: SweeperOptions) {
  return runPeriodically(
    async () => {
      await sweepIdempotencyKeys(prisma);
    },
    { intervalMs, logger, failure: 'idempotency key sweep failed' },
  );
}

/** Removes run records' captured bodies past their tenant's retention (default every 10 min; docs/runs.md). */
export function startRunContentSweeper({ prisma, logger, intervalMs = 600_000 }: SweeperOptions) {
  return runPeriodically(
    async () => {
      while ((await expireStepContent(prisma)) === 1000);
    },
    { intervalMs, logger, failure: 'run content sweep failed' },
  );
}
