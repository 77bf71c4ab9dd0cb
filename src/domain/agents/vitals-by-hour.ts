import type { PrismaClient } from '../../db/client.js';
import { MAX_ATTEMPTS } from './queue.js';
import { type AgentVitals, VITALS_PERIOD_HOURS, type VitalsTotals, vitalsFrom } from './vitals.js';

/**
 * The vital signs of one agent role for each hour of the period `agentVitals` covers (the trailing 24 h
 * ending now, by the database clock), oldest first: hour i runs from `start + i h` up to, not including,
 * `start + (i + 1) h`, and the last one includes the period's end. Each hour is counted by the rules of
 * `agentVitals`, so the hours' counts and sums add up to the day's. `role` is a role of the tenant,
 * already resolved (lower case).
 */
export async function agentVitalsByHour(
  prisma: PrismaClient,
  tenantId: string,
  role: string,
): Promise<AgentVitals[]> {
  const rows = await prisma.$queryRaw<(VitalsTotals & { hour: number })[]>`
    WITH period AS (
      SELECT now() - make_interval(hours => ${VITALS_PERIOD_HOURS}::int) AS period_start, now() AS period_end
    ),
    hours AS (
      SELECT h AS hour,
        p.period_start + make_interval(hours => h) AS hour_start,
        CASE WHEN h = ${VITALS_PERIOD_HOURS - 1}::int THEN p.period_end
             ELSE p.period_start + make_interval(hours => h + 1) END AS hour_end
      FROM period p, generate_series(0, ${VITALS_PERIOD_HOURS - 1}::int) AS h
    ),
    finished AS (
      SELECT least(${VITALS_PERIOD_HOURS - 1}::int,
               floor(extract(epoch FROM t.finished_at - p.period_start) / 3600)::int) AS hour,
        count(*) FILTER (WHERE t.status = 'completed')::int AS completed,
        count(*) FILTER (WHERE t.status = 'failed')::int AS failed,
        (avg(extract(epoch FROM t.finished_at - t.started_at)) FILTER (WHERE t.status = 'completed'))::float8 AS avg_seconds,
        coalesce(sum(t.tokens_used), 0)::text AS tokens,
        coalesce(sum(t.cost_usd), 0)::text AS cost
      FROM tasks t, period p
      WHERE t.tenant_id = ${tenantId}::uuid AND t.role = ${role}
        AND t.finished_at >= p.period_start AND t.finished_at <= p.period_end
      GROUP BY 1
    ),
    lapsed AS (
      SELECT least(${VITALS_PERIOD_HOURS - 1}::int,
               floor(extract(epoch FROM t.lease_expires_at - p.period_start) / 3600)::int) AS hour,
        count(*)::int AS failed
      FROM tasks t, period p
      WHERE t.tenant_id = ${tenantId}::uuid AND t.role = ${role} AND t.status = 'running' AND t.attempts >= ${MAX_ATTEMPTS}
        AND t.lease_expires_at >= p.period_start AND t.lease_expires_at <= p.period_end
      GROUP BY 1
    ),
    decided AS (
      SELECT least(${VITALS_PERIOD_HOURS - 1}::int,
               floor(extract(epoch FROM r.decided_at - p.period_start) / 3600)::int) AS hour,
        count(*) FILTER (WHERE r.accepted)::int AS accepted, count(*)::int AS decided
      FROM recommendations r, period p
      WHERE r.tenant_id = ${tenantId}::uuid AND r.role = ${role}
        AND r.decided_at >= p.period_start AND r.decided_at <= p.period_end
      GROUP BY 1
    ),
    evaluated AS (
      SELECT least(${VITALS_PERIOD_HOURS - 1}::int,
               floor(extract(epoch FROM r.outcome_recorded_at - p.period_start) / 3600)::int) AS hour,
        count(*) FILTER (WHERE r.outcome_matched)::int AS matched, count(*)::int AS evaluated
      FROM recommendations r, period p
      WHERE r.tenant_id = ${tenantId}::uuid AND r.role = ${role}
        AND r.outcome_recorded_at >= p.period_start AND r.outcome_recorded_at <= p.period_end
      GROUP BY 1
    )
    SELECT h.hour, h.hour_start AS "periodStart", h.hour_end AS "periodEnd",
      coalesce(f.completed, 0) AS completed,
      coalesce(f.failed, 0) + coalesce(l.failed, 0) AS failed,
      f.avg_seconds AS "avgSeconds",
      coalesce(f.tokens, '0') AS tokens, coalesce(f.cost, '0') AS cost,
      coalesce(d.accepted, 0) AS accepted, coalesce(d.decided, 0) AS decided,
      coalesce(e.matched, 0) AS matched, coalesce(e.evaluated, 0) AS evaluated
    FROM hours h
      LEFT JOIN finished f ON f.hour = h.hour
      LEFT JOIN lapsed l ON l.hour = h.hour
      LEFT JOIN decided d ON d.hour = h.hour
      LEFT JOIN evaluated e ON e.hour = h.hour
    ORDER BY h.hour`;
  return rows.map((totals) => vitalsFrom(role, totals));
}
