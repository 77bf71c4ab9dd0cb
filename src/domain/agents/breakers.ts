import { createHash, randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import type { Actor } from '../actor.js';
import { type BreakerTripResult, breakerActor, pauseForBreaker } from '../dogfood/pause.js';
import { conflict, forbidden, notFound } from '../errors.js';
import { type BreakerKind, readRoleForCheck } from './breaker-policy.js';
import { roleScopeSql } from './role-binding.js';

/**
 * Circuit breakers: checks made after a change has committed (a task failed or completed, a lease lapsed, a
 * task ran long, a connector call was repeated, a delegation was refused as a cycle). A check that finds its
 * breaker's limit passed pauses the role through the dogfood pause's transition (pauseForBreaker) with
 * `breaker:<kind>` as the actor and the evidence (figures and task ids) in the audit entry and the event.
 * The trip is unique per incident, so it happens once, whichever instance saw it first. A role already
 * paused, or whose breakers are off, is not checked.
 */

/** What a check runs with: the database, the request it follows (its id stamps the audit row), a logger. */
export interface BreakerContext {
  readonly prisma: PrismaClient;
  readonly requestId?: string | undefined;
  readonly log?: Logger | undefined;
}

const MAX_EVIDENCE_IDS = 20;
const round = (value: number, digits = 6) => Number(value.toFixed(digits));

/** Pauses `role` for breaker `kind`; null when the incident had already tripped. */
function trip(
  context: BreakerContext,
  tenantId: string,
  role: string,
  kind: BreakerKind,
  incidentKey: string,
  evidence: Record<string, unknown>,
  summary: string,
): Promise<BreakerTripResult | null> {
  const actor: Actor = {
    viewer: { tenantId, sub: breakerActor(kind), roles: [] },
    prisma: context.prisma,
    requestId: context.requestId ?? randomUUID(),
  };
  return pauseForBreaker(actor, role, { kind, incidentKey, evidence, summary });
}

/**
 * Runs a check after the change it follows has committed: a check that fails is logged, never the caller's
 * error (the change it follows stands).
 */
async function guarded<T>(context: BreakerContext, what: string, check: () => Promise<T>): Promise<T | null> {
  try {
    return await check();
  } catch (error) {
    context.log?.error({ err: error }, `breaker check failed: ${what}`);
    if (!context.log) throw error;
    return null;
  }
}

/**
 * After a task of `role` failed (failTask, or a lease lapsing on its last attempt): the consecutive-failures
 * breaker. The streak is the failed tasks that finished after the role's last completed task and its last
 * resume; its incident is its first task, so a streak trips once, and a new streak after a resume again.
 */
export function checkFailures(context: BreakerContext, tenantId: string, role: string) {
  return guarded(context, 'consecutive_failures', async () => {
    const policy = await readRoleForCheck(context.prisma, tenantId, role);
    if (!policy?.enabled || policy.paused) return null;
    const streak = await context.prisma.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM tasks
      WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'failed'
        AND finished_at > greatest(
          coalesce((SELECT max(finished_at) FROM tasks
            WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'completed'), '-infinity'),
          coalesce(${policy.resumedAt}::timestamptz, '-infinity'))
      ORDER BY finished_at, id
      LIMIT ${policy.consecutiveFailures}`;
    const first = streak[0];
    if (!first || streak.length < policy.consecutiveFailures) return null;
    const ids = streak.map((task) => task.id);
    return trip(
      context,
      tenantId,
      role,
      'consecutive_failures',
      first.id,
      {
        failed_tasks: ids.length,
        threshold: policy.consecutiveFailures,
        task_ids: ids.slice(0, MAX_EVIDENCE_IDS),
      },
      `${ids.length} tasks failed in a row (threshold ${policy.consecutiveFailures})`,
    );
  });
}

/** A task as the spend and duration breakers read it after it ended. */
export interface EndedTask {
  id: string;
  role: string;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * After a task of `role` completed with a cost: the spend breaker. Spend is the cost of the role's tasks
 * that finished in the last `spendWindowMinutes` (and since its last resume); it trips above
 * `spendLimitUsd`, or above `spendMultiple` times the role's trailing rate (its spend in the 7 days before
 * the window, scaled to one window) when it has one. The incident is the window's bucket (windows counted
 * from the epoch), and the last resume when it falls in the bucket.
 */
export function checkSpend(context: BreakerContext, tenantId: string, role: string) {
  return guarded(context, 'spend', async () => {
    const policy = await readRoleForCheck(context.prisma, tenantId, role);
    if (!policy?.enabled || policy.paused) return null;
    if (policy.spendLimitUsd === null && policy.spendMultiple === null) return null;
    const windowMs = policy.spendWindowMinutes * 60_000;
    const [row] = await context.prisma.$queryRaw<
      { now: Date; spent: string; trailing: string; task_ids: string[] | null; window_start: Date }[]
    >`
      WITH bounds AS (
        SELECT now() AS now, now() - ${windowMs}::bigint * interval '1 millisecond' AS window_start
      )
      SELECT b.now, b.window_start,
        coalesce(sum(t.cost_usd) FILTER (
          WHERE t.finished_at > greatest(b.window_start, coalesce(${policy.resumedAt}::timestamptz, '-infinity'))
        ), 0)::text AS spent,
        coalesce(sum(t.cost_usd) FILTER (WHERE t.finished_at <= b.window_start), 0)::text AS trailing,
        (array_agg(t.id::text ORDER BY t.cost_usd DESC, t.id) FILTER (
          WHERE t.finished_at > greatest(b.window_start, coalesce(${policy.resumedAt}::timestamptz, '-infinity'))
        ))[1:${MAX_EVIDENCE_IDS}] AS task_ids
      FROM bounds b
      LEFT JOIN tasks t ON t.tenant_id = ${tenantId}::uuid AND t.role = ${role} AND t.cost_usd IS NOT NULL
        AND t.finished_at > b.window_start - interval '7 days' AND t.finished_at <= b.now
      GROUP BY b.now, b.window_start`;
    if (!row) return null;
    const spent = Number(row.spent);
    const trailingPerWindow = (Number(row.trailing) * policy.spendWindowMinutes) / (7 * 24 * 60);
    const byMultiple =
      policy.spendMultiple !== null && trailingPerWindow > 0
        ? trailingPerWindow * policy.spendMultiple
        : null;
    const rule =
      policy.spendLimitUsd !== null && spent > policy.spendLimitUsd
        ? { rule: 'absolute', thresholdUsd: policy.spendLimitUsd }
        : byMultiple !== null && spent > byMultiple
          ? { rule: 'trailing_multiple', thresholdUsd: byMultiple }
          : null;
    if (!rule) return null;
    const bucket = new Date(Math.floor(row.now.getTime() / windowMs) * windowMs);
    const resumedInBucket = policy.resumedAt && policy.resumedAt > bucket ? policy.resumedAt : null;
    const incident = `${bucket.toISOString()}${resumedInBucket ? `/${resumedInBucket.toISOString()}` : ''}`;
    return trip(
      context,
      tenantId,
      role,
      'spend',
      incident,
      {
        rule: rule.rule,
        spent_usd: round(spent),
        threshold_usd: round(rule.thresholdUsd),
        limit_usd: policy.spendLimitUsd,
        multiple: policy.spendMultiple,
        trailing_usd_per_window: round(trailingPerWindow),
        window_minutes: policy.spendWindowMinutes,
        window_start: row.window_start.toISOString(),
        task_ids: row.task_ids ?? [],
      },
      `spent $${round(spent)} in ${policy.spendWindowMinutes} min, above $${round(rule.thresholdUsd)} (${rule.rule})`,
    );
  });
}

/** The duration breaker for one task: its incident is the task. */
async function tripOnDuration(
  context: BreakerContext,
  tenantId: string,
  task: { id: string; role: string; startedAt: Date; minutes: number; limit: number; status: string },
) {
  return trip(
    context,
    tenantId,
    task.role,
    'duration_exceeded',
    task.id,
    {
      task_id: task.id,
      status: task.status,
      started_at: task.startedAt.toISOString(),
      running_minutes: round(task.minutes, 1),
      max_duration_minutes: task.limit,
    },
    `task ${task.id} ran ${round(task.minutes, 1)} min, longer than ${task.limit} min`,
  );
}

/** After a task ended (completed or failed): the duration breaker, for a task that ran past its limit. */
export function checkDuration(context: BreakerContext, tenantId: string, task: EndedTask, status: string) {
  return guarded(context, 'duration_exceeded', async () => {
    if (!task.startedAt || !task.finishedAt) return null;
    const policy = await readRoleForCheck(context.prisma, tenantId, task.role);
    if (!policy?.enabled || policy.paused) return null;
    const minutes = (task.finishedAt.getTime() - task.startedAt.getTime()) / 60_000;
    if (minutes <= policy.maxDurationMinutes) return null;
    return tripOnDuration(context, tenantId, {
      id: task.id,
      role: task.role,
      startedAt: task.startedAt,
      minutes,
      limit: policy.maxDurationMinutes,
      status,
    });
  });
}

/** A task a lapsed lease changed (reapExpiredLeases), as the attempts breaker reads it. */
export interface ReapedTask {
  id: string;
  role: string;
  status: string;
  attempts: number;
}

/**
 * After leases lapsed: the attempts breaker, for each task whose lease lapsed on attempt `maxAttempts` (the
 * task's own limit, MAX_ATTEMPTS, by default) or later; its incident is the task. Then the
 * consecutive-failures breaker when one ended failed.
 */
export async function checkReaped(
  context: BreakerContext,
  tenantId: string,
  tasks: readonly ReapedTask[],
  taskLimit: number,
) {
  for (const role of new Set(tasks.map((task) => task.role))) {
    const ofRole = tasks.filter((task) => task.role === role);
    await guarded(context, 'attempts_exceeded', async () => {
      const policy = await readRoleForCheck(context.prisma, tenantId, role);
      if (!policy?.enabled || policy.paused) return;
      const limit = policy.maxAttempts ?? taskLimit;
      for (const task of ofRole.filter((reaped) => reaped.attempts >= limit)) {
        await trip(
          context,
          tenantId,
          role,
          'attempts_exceeded',
          task.id,
          { task_id: task.id, attempts: task.attempts, max_attempts: limit, status: task.status },
          `task ${task.id}'s lease lapsed on attempt ${task.attempts} (limit ${limit})`,
        );
      }
    });
    if (ofRole.some((task) => task.status === 'failed')) await checkFailures(context, tenantId, role);
  }
}

/**
 * The duration breaker for tasks still running: every running task (any tenant) claimed longer ago than
 * its role's `maxDurationMinutes`, whose incident has not tripped and whose role is not paused. Run by the
 * lease sweeper. Answers how many tripped.
 */
export async function sweepLongRunningTasks(
  context: BreakerContext,
  defaultMinutes: number,
): Promise<number> {
  const rows = await context.prisma.$queryRaw<
    {
      id: string;
      tenant_id: string;
      role: string;
      started_at: Date;
      minutes: number;
      limit_minutes: number;
    }[]
  >`
    SELECT t.id::text, t.tenant_id::text, t.role, t.started_at,
      extract(epoch FROM now() - t.started_at)::float8 / 60 AS minutes,
      coalesce(p.max_duration_minutes, ${defaultMinutes}::int) AS limit_minutes
    FROM tasks t
    JOIN agent_roles r ON r.tenant_id = t.tenant_id AND r.role = t.role AND NOT r.paused
    LEFT JOIN breaker_policies p ON p.tenant_id = t.tenant_id AND p.role = t.role
    WHERE t.status = 'running' AND coalesce(p.enabled, true)
      AND t.started_at < now() - coalesce(p.max_duration_minutes, ${defaultMinutes}::int) * interval '1 minute'
      AND NOT EXISTS (
        SELECT 1 FROM breaker_trips b
        WHERE b.tenant_id = t.tenant_id AND b.role = t.role AND b.kind = 'duration_exceeded'
          AND b.incident_key = t.id::text)
    ORDER BY t.started_at
    LIMIT 100`;
  let tripped = 0;
  for (const row of rows) {
    const result = await guarded(context, 'duration_exceeded', () =>
      tripOnDuration(context, row.tenant_id, {
        id: row.id,
        role: row.role,
        startedAt: row.started_at,
        minutes: row.minutes,
        limit: row.limit_minutes,
        status: 'running',
      }),
    );
    if (result) tripped += 1;
  }
  return tripped;
}

/** One connector call as the repeated-call breaker tells calls apart: its endpoint and its arguments. */
export interface ConnectorCallShape {
  connectorId: string;
  method: string;
  path: string;
  query?: unknown;
  body?: unknown;
}

/** JSON with object keys sorted, so the same arguments always give the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** SHA-256 of the endpoint and the canonical arguments (query and body; headers are not arguments). */
export const callFingerprint = (call: ConnectorCallShape) =>
  createHash('sha256')
    .update(
      canonicalJson({
        connector: call.connectorId,
        method: call.method.toUpperCase(),
        path: call.path,
        query: call.query ?? null,
        body: call.body ?? null,
      }),
    )
    .digest('hex');

/**
 * Counts a connector call made for a task and runs the repeated-call breaker: the caller's running task
 * (404 another tenant's or a role its token does not work for, 409 not running, 403 another agent's; a
 * refusal counts nothing and nothing is sent). The call that makes the same call's count reach
 * `repeatedCallLimit` within the task trips (the incident: the task and the call's fingerprint).
 */
export async function countConnectorCall(
  context: Actor & BreakerContext,
  taskId: string,
  call: ConnectorCallShape,
): Promise<{ count: number; tripped: boolean }> {
  const { tenantId, sub } = context.viewer;
  const [task] = await context.prisma.$queryRaw<
    { role: string; status: string; claimed_by: string | null }[]
  >`
    SELECT role, status::text, claimed_by FROM tasks
    WHERE id = ${taskId}::uuid AND tenant_id = ${tenantId}::uuid ${roleScopeSql(context.viewer)}`;
  if (!task) throw notFound(`Task ${taskId} not found`);
  if (task.status !== 'running') throw conflict(`Task ${taskId} is ${task.status}, not running`);
  if (task.claimed_by !== sub) throw forbidden(`Task ${taskId} is claimed by another agent`);
  const fingerprint = callFingerprint(call);
  const [counted] = await context.prisma.$queryRaw<{ count: number }[]>`
    INSERT INTO connector_call_fingerprints (task_id, fingerprint, connector_id, count)
    VALUES (${taskId}::uuid, ${fingerprint}, ${call.connectorId}::uuid, 1)
    ON CONFLICT (task_id, fingerprint) DO UPDATE
      SET count = connector_call_fingerprints.count + 1, updated_at = now()
    RETURNING count`;
  const count = counted?.count ?? 1;
  const tripped = await guarded(context, 'repeated_call', async () => {
    const policy = await readRoleForCheck(context.prisma, tenantId, task.role);
    if (!policy?.enabled || policy.paused || count < policy.repeatedCallLimit) return null;
    return trip(
      context,
      tenantId,
      task.role,
      'repeated_call',
      `${taskId}/${fingerprint}`,
      {
        task_id: taskId,
        connector_id: call.connectorId,
        method: call.method.toUpperCase(),
        path: call.path,
        fingerprint,
        calls: count,
        limit: policy.repeatedCallLimit,
      },
      `task ${taskId} made the same ${call.method.toUpperCase()} ${call.path} call ${count} times (limit ${policy.repeatedCallLimit})`,
    );
  });
  return { count, tripped: tripped !== null };
}

/**
 * After a delegation was refused as a cycle (`delegation_cycle`): trips the delegating role's breaker when
 * its policy says so; the incident is the delegating task.
 */
export function tripOnDelegationCycle(
  context: BreakerContext,
  refusal: { tenantId: string; role: string; chain: readonly string[]; taskId: string },
) {
  return guarded(context, 'delegation_cycle', async () => {
    const policy = await readRoleForCheck(context.prisma, refusal.tenantId, refusal.role);
    if (!policy?.enabled || !policy.onDelegationCycle || policy.paused) return null;
    return trip(
      context,
      refusal.tenantId,
      refusal.role,
      'delegation_cycle',
      refusal.taskId,
      { task_id: refusal.taskId, chain: [...refusal.chain] },
      `task ${refusal.taskId} tried to delegate in a cycle (${refusal.chain.join(' → ')})`,
    );
  });
}
