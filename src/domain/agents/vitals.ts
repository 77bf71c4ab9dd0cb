import type { Actor } from '../actor.js';
import { MAX_ATTEMPTS } from './queue.js';
import { requireAgentRole } from './registry.js';

/** Vitals cover the trailing day ending at the request. */
export const VITALS_PERIOD_HOURS = 24;

export interface AgentVitals {
  agentRole: string;
  tasksCompleted: number;
  tasksFailed: number;
  /** Mean of finish − start of the completed tasks; null when none completed. */
  avgExecutionTimeSeconds: number | null;
  /** Accepted / decided recommendations; null when none was decided. */
  acceptanceRate: number | null;
  /** Matched / evaluated predicted outcomes; null when none was evaluated. */
  outcomeAccuracy: number | null;
  tokensUsed: number;
  costUsd: number;
  periodStart: Date;
  periodEnd: Date;
}

/** `part / whole`, or null when there is nothing to divide by. */
export function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

export interface VitalsTotals {
  periodStart: Date;
  periodEnd: Date;
  completed: number;
  failed: number;
  avgSeconds: number | null;
  /** Exact sum, as text: tokens are 64-bit counts. */
  tokens: string;
  /** Exact decimal sum, as text. */
  cost: string;
  accepted: number;
  decided: number;
  matched: number;
  evaluated: number;
}

/** An exact integer sum as a number; beyond 2^53 - 1, which no JSON number carries exactly, it saturates. */
export function safeCount(sum: string): number {
  const exact = BigInt(sum);
  return exact > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(exact);
}

/** Vitals from the period's aggregates. */
export function vitalsFrom(agentRole: string, totals: VitalsTotals): AgentVitals {
  return {
    agentRole,
    tasksCompleted: totals.completed,
    tasksFailed: totals.failed,
    avgExecutionTimeSeconds: totals.completed === 0 ? null : totals.avgSeconds,
    acceptanceRate: ratio(totals.accepted, totals.decided),
    outcomeAccuracy: ratio(totals.matched, totals.evaluated),
    tokensUsed: safeCount(totals.tokens),
    costUsd: Number(totals.cost),
    periodStart: totals.periodStart,
    periodEnd: totals.periodEnd,
  };
}

/**
 * Reads the vital signs of one agent role from aggregates over the period, each a range scan of an index on
 * (tenant, role, time): tasks by finished_at, recommendations by decided_at and by outcome_recorded_at. The
 * database clock bounds the period, the same clock that stamps those times. A task whose last lease lapsed
 * but that no claim has swept yet counts as failed at its lease end, the time the sweep records for it.
 */
export async function agentVitals(context: Actor, rawRole: string): Promise<AgentVitals> {
  const { role } = await requireAgentRole(context, rawRole);
  const { tenantId } = context.viewer;
  const [totals] = await context.prisma.$queryRaw<VitalsTotals[]>`
    WITH period AS (
      SELECT now() - make_interval(hours => ${VITALS_PERIOD_HOURS}::int) AS period_start, now() AS period_end
    ),
    finished AS (
      SELECT
        count(*) FILTER (WHERE t.status = 'completed')::int AS completed,
        count(*) FILTER (WHERE t.status = 'failed')::int AS failed,
        (avg(extract(epoch FROM t.finished_at - t.started_at)) FILTER (WHERE t.status = 'completed'))::float8 AS avg_seconds,
        coalesce(sum(t.tokens_used), 0)::text AS tokens,
        coalesce(sum(t.cost_usd), 0)::text AS cost
      FROM tasks t, period p
      WHERE t.tenant_id = ${tenantId}::uuid AND t.role = ${role}
        AND t.finished_at >= p.period_start AND t.finished_at <= p.period_end
    ),
    lapsed AS (
      SELECT count(*)::int AS failed
      FROM tasks t, period p
      WHERE t.tenant_id = ${tenantId}::uuid AND t.role = ${role} AND t.status = 'running' AND t.attempts >= ${MAX_ATTEMPTS}
        AND t.lease_expires_at >= p.period_start AND t.lease_expires_at <= p.period_end
    ),
    decided AS (
      SELECT count(*) FILTER (WHERE r.accepted)::int AS accepted, count(*)::int AS decided
      FROM recommendations r, period p
      WHERE r.tenant_id = ${tenantId}::uuid AND r.role = ${role}
        AND r.decided_at >= p.period_start AND r.decided_at <= p.period_end
    ),
    evaluated AS (
      SELECT count(*) FILTER (WHERE r.outcome_matched)::int AS matched, count(*)::int AS evaluated
      FROM recommendations r, period p
      WHERE r.tenant_id = ${tenantId}::uuid AND r.role = ${role}
        AND r.outcome_recorded_at >= p.period_start AND r.outcome_recorded_at <= p.period_end
    )
    SELECT p.period_start AS "periodStart", p.period_end AS "periodEnd",
      f.completed, f.failed + l.failed AS failed, f.avg_seconds AS "avgSeconds", f.tokens, f.cost,
      d.accepted, d.decided, e.matched, e.evaluated
    FROM period p, finished f, lapsed l, decided d, evaluated e`;
  if (!totals) throw new Error('vitals query returned no row');
  return vitalsFrom(role, totals);
}
