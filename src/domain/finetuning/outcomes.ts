import type { PrismaClient } from '../../db/client.js';
import { Prisma } from '../../generated/prisma/client.js';

/**
 * Per-version outcome counters, one row per (model version, UTC hour), written in the transaction that
 * changes what they count, as the A/B variants' counters are: a task finishing counts in the hour of its
 * finish, a decision or an evaluated outcome in the hour it was recorded. A decision or outcome replaced
 * by a different one moves from the hour of the old record to the hour of the new one, as agentVitals
 * counts it. Only tasks a claim routed to a version (tasks.model_version_id) count.
 *
 * The same statements keep the per-run counters of canary runs (`canary_run_outcomes`, one row per run and
 * version): a task a claim routed while its base model had a canary carries that run (tasks.canary_run_id,
 * on either arm), and its finish, decisions and evaluated outcomes count in its run's row of its version as
 * well, without an hour (a replaced decision or outcome is replaced there too).
 */

/** The longest window `outcomesOfVersion` reads: 90 days of hourly rows. */
export const MAX_OUTCOME_WINDOW_HOURS = 24 * 90;

/** Hours are counted from the Unix epoch, in UTC whatever the session's time zone. */
const HOUR = `'1 hour'::interval`;
const EPOCH = `timestamptz '1970-01-01 00:00:00+00'`;

/**
 * The CTEs (`per_run`, `per_hour`) that count the tasks the CTE `finished` holds (tasks' columns) that just
 * ended, `completed` or `failed`, in their versions' hours and in their canary runs; a task that did not
 * end, or carries no version, is not counted. For statements that end a task and count it at once.
 */
export function finishedTaskCounters(finished: string): Prisma.Sql {
  return Prisma.sql`
    counted AS (
      SELECT tenant_id, model_version_id, canary_run_id, status, started_at, finished_at, tokens_used, cost_usd
      FROM ${Prisma.raw(finished)}
      WHERE model_version_id IS NOT NULL AND status IN ('completed', 'failed') AND finished_at IS NOT NULL
    ),
    per_run AS (
      INSERT INTO canary_run_outcomes AS r (run_id, tenant_id, model_version_id, completed, failed)
      SELECT canary_run_id, tenant_id, model_version_id,
        count(*) FILTER (WHERE status = 'completed')::int, count(*) FILTER (WHERE status = 'failed')::int
      FROM counted WHERE canary_run_id IS NOT NULL
      GROUP BY 1, 2, 3
      ON CONFLICT (run_id, model_version_id) DO UPDATE SET
        completed = r.completed + EXCLUDED.completed, failed = r.failed + EXCLUDED.failed
    ),
    per_hour AS (
      INSERT INTO model_version_outcomes AS o
        (tenant_id, model_version_id, hour_start, completed, failed, execution_ms, tokens, cost_usd)
      SELECT tenant_id, model_version_id, date_bin(${Prisma.raw(HOUR)}, finished_at, ${Prisma.raw(EPOCH)}),
        count(*) FILTER (WHERE status = 'completed')::int,
        count(*) FILTER (WHERE status = 'failed')::int,
        coalesce(sum(round(extract(epoch FROM finished_at - started_at) * 1000)) FILTER (WHERE status = 'completed'), 0)::bigint,
        coalesce(sum(tokens_used) FILTER (WHERE status = 'completed'), 0)::bigint,
        coalesce(sum(cost_usd) FILTER (WHERE status = 'completed'), 0)
      FROM counted
      GROUP BY 1, 2, 3
      ON CONFLICT (model_version_id, hour_start) DO UPDATE SET
        completed = o.completed + EXCLUDED.completed, failed = o.failed + EXCLUDED.failed,
        execution_ms = o.execution_ms + EXCLUDED.execution_ms, tokens = o.tokens + EXCLUDED.tokens,
        cost_usd = o.cost_usd + EXCLUDED.cost_usd
    )`;
}

/**
 * Counts tasks that just ended (`completed` or `failed`) in their versions' hours and in their canary
 * runs; ids of tasks that did not end, or carry no version, are ignored. One statement.
 */
export async function countFinishedTasks(
  tx: Prisma.TransactionClient,
  taskIds: readonly string[],
): Promise<void> {
  if (taskIds.length === 0) return;
  await tx.$executeRaw`
    WITH finished AS (SELECT * FROM tasks WHERE id = ANY(${[...taskIds]}::uuid[])),
    ${finishedTaskCounters('finished')}
    SELECT 1`;
}

/** What a recommendation record replaces: a decision (accepted) or an evaluated outcome (matched). */
export type RecommendationRecord = 'decision' | 'outcome';

/**
 * Moves a recommendation's decision or outcome in its task's version counters: the record it holds now (if
 * any) leaves the hour it was made in, and `value` enters the current hour; in the task's canary run, if
 * any, `value` replaces it. Call it, locked, before the recommendation is updated, only when the value
 * changes. One statement; nothing for an unrouted task.
 */
export async function countRecommendationRecord(
  tx: Prisma.TransactionClient,
  recommendationId: string,
  record: RecommendationRecord,
  value: boolean,
): Promise<void> {
  const [valueColumn, atColumn, total, hits] =
    record === 'decision'
      ? ['accepted', 'decided_at', 'decided', 'accepted']
      : ['outcome_matched', 'outcome_recorded_at', 'evaluated', 'matched'];
  await tx.$executeRawUnsafe(
    `
    WITH rec AS (
      SELECT t.tenant_id, t.model_version_id, t.canary_run_id,
        r.${valueColumn} AS old_value, r.${atColumn} AS old_at,
        r.${valueColumn} IS NOT NULL AND r.${atColumn} IS NOT NULL AS counted
      FROM recommendations r JOIN tasks t ON t.id = r.task_id
      WHERE r.id = $1::uuid AND t.model_version_id IS NOT NULL
    ),
    per_run AS (
      INSERT INTO canary_run_outcomes AS c (run_id, tenant_id, model_version_id, ${total}, ${hits})
      SELECT canary_run_id, tenant_id, model_version_id, CASE WHEN counted THEN 0 ELSE 1 END,
        CASE WHEN $2::boolean THEN 1 ELSE 0 END - CASE WHEN counted AND old_value THEN 1 ELSE 0 END
      FROM rec WHERE canary_run_id IS NOT NULL
      ON CONFLICT (run_id, model_version_id) DO UPDATE SET
        ${total} = c.${total} + EXCLUDED.${total}, ${hits} = c.${hits} + EXCLUDED.${hits}
    ),
    deltas AS (
      SELECT tenant_id, model_version_id, date_bin(${HOUR}, old_at, ${EPOCH}) AS hour_start,
        -1 AS total, CASE WHEN old_value THEN -1 ELSE 0 END AS hits
      FROM rec WHERE counted
      UNION ALL
      SELECT tenant_id, model_version_id, date_bin(${HOUR}, now(), ${EPOCH}), 1, CASE WHEN $2::boolean THEN 1 ELSE 0 END
      FROM rec
    )
    INSERT INTO model_version_outcomes AS o (tenant_id, model_version_id, hour_start, ${total}, ${hits})
    SELECT tenant_id, model_version_id, hour_start, sum(total)::int, sum(hits)::int
    FROM deltas GROUP BY 1, 2, 3
    ON CONFLICT (model_version_id, hour_start) DO UPDATE SET
      ${total} = o.${total} + EXCLUDED.${total}, ${hits} = o.${hits} + EXCLUDED.${hits}`,
    recommendationId,
    value,
  );
}

export interface VersionOutcomes {
  /** The start of the window's first hour. */
  windowStart: Date;
  /** The read's time (the database clock): the window ends with the current hour. */
  windowEnd: Date;
  hours: number;
  tasksCompleted: number;
  tasksFailed: number;
  /** failed / (completed + failed); null when none ended. */
  failureRate: number | null;
  /** accepted / decided recommendations; null when none was decided. */
  acceptanceRate: number | null;
  /** matched / evaluated predicted outcomes; null when none was evaluated. */
  outcomeAccuracy: number | null;
  tokensUsed: number;
  costUsd: number;
  /** Mean finish − start of completed tasks; null when none completed. */
  avgExecutionTimeSeconds: number | null;
  decided: number;
  accepted: number;
  evaluated: number;
  matched: number;
}

interface OutcomeTotals {
  window_start: Date;
  window_end: Date;
  completed: number;
  failed: number;
  execution_ms: string;
  tokens: string;
  cost: string;
  decided: number;
  accepted: number;
  evaluated: number;
  matched: number;
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);

/**
 * A version's outcomes over the current UTC hour and the `hours - 1` before it: a sum of at most `hours`
 * counter rows, whatever the number of tasks. Another tenant's version reads as zeros.
 */
export async function outcomesOfVersion(
  prisma: PrismaClient,
  tenantId: string,
  modelVersionId: string,
  hours: number,
): Promise<VersionOutcomes> {
  const [row] = await prisma.$queryRawUnsafe<OutcomeTotals[]>(
    `
    WITH w AS (SELECT date_bin(${HOUR}, now(), ${EPOCH}) - ($3::int - 1) * interval '1 hour' AS start)
    SELECT w.start AS window_start, now() AS window_end,
      coalesce(sum(o.completed), 0)::int AS completed, coalesce(sum(o.failed), 0)::int AS failed,
      coalesce(sum(o.execution_ms), 0)::text AS execution_ms, coalesce(sum(o.tokens), 0)::text AS tokens,
      coalesce(sum(o.cost_usd), 0)::text AS cost,
      coalesce(sum(o.decided), 0)::int AS decided, coalesce(sum(o.accepted), 0)::int AS accepted,
      coalesce(sum(o.evaluated), 0)::int AS evaluated, coalesce(sum(o.matched), 0)::int AS matched
    FROM w LEFT JOIN model_version_outcomes o
      ON o.model_version_id = $2::uuid AND o.tenant_id = $1::uuid AND o.hour_start >= w.start
    GROUP BY w.start`,
    tenantId,
    modelVersionId,
    hours,
  );
  if (!row) throw new Error('outcome window read returned no row');
  const ended = row.completed + row.failed;
  return {
    windowStart: row.window_start,
    windowEnd: row.window_end,
    hours,
    tasksCompleted: row.completed,
    tasksFailed: row.failed,
    failureRate: ratio(row.failed, ended),
    acceptanceRate: ratio(row.accepted, row.decided),
    outcomeAccuracy: ratio(row.matched, row.evaluated),
    tokensUsed: Number(row.tokens),
    costUsd: Number(row.cost),
    avgExecutionTimeSeconds: row.completed === 0 ? null : Number(row.execution_ms) / 1000 / row.completed,
    decided: row.decided,
    accepted: row.accepted,
    evaluated: row.evaluated,
    matched: row.matched,
  };
}
