import { recordAudit } from '../../audit.js';
import type { AgentRole, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notFound } from '../errors.js';
import { assignmentPoint } from '../experiments/assignment.js';
import { unknownAgentRole } from './registry.js';
import { normalizeRole } from './roles.js';

/**
 * How a claimed task's model version was chosen:
 * - `unbound`: the role is bound to no base model; the task carries no version.
 * - `no_production`: the role's base model has no production version; the task carries no version.
 * - `production` / `canary`: the task carries that version of the role's base model.
 */
export type RoutingChoice = 'unbound' | 'no_production' | 'production' | 'canary';

export interface ModelRouting {
  choice: RoutingChoice;
  /** The role's base model; null when unbound. */
  baseModel: string | null;
  modelVersionId: string | null;
  /** True when the thread (or the task itself, claimed again) kept the version chosen for it before. */
  sticky: boolean;
}

export interface LiveVersion {
  id: string;
  status: 'production' | 'canary';
  canaryTrafficPct: number | null;
}

export interface RoutingInput {
  baseModel: string | null;
  /** The production and canary versions of the base model. */
  live: readonly LiveVersion[];
  /** The version the thread's latest routed task (or this task, on an earlier claim) was given. */
  kept: string | null;
  /** The thread id, or the task id for a task without a thread. */
  subject: string;
}

/**
 * Where a subject (a thread, or a task without one) falls for a canary: a number uniform in [0, 1) from
 * SHA-256 of `${canaryVersionId}:${subject}`, the A/B tests' `assignmentPoint`. The canary takes the
 * subject when the point is below canary_traffic_pct / 100, so a thread always lands on the same side of
 * one canary, each canary samples its own threads, and raising the share only adds threads to it.
 */
export function canaryPoint(canaryVersionId: string, subject: string): number {
  return assignmentPoint(canaryVersionId, subject);
}

/**
 * The version a claimed task must use. Without a production version there is none (a canary is a share of
 * production's traffic). A thread keeps the version its latest routed task got while that version is
 * still production or canary; otherwise the canary takes the thread with probability canary_traffic_pct
 * by `canaryPoint`, and production takes the rest.
 */
export function chooseModelVersion(input: RoutingInput): ModelRouting {
  const { baseModel } = input;
  if (baseModel === null) return { choice: 'unbound', baseModel, modelVersionId: null, sticky: false };
  const production = input.live.find((version) => version.status === 'production');
  if (!production) return { choice: 'no_production', baseModel, modelVersionId: null, sticky: false };
  const canary = input.live.find((version) => version.status === 'canary');
  const kept = input.live.find((version) => version.id === input.kept);
  if (kept) return { choice: kept.status, baseModel, modelVersionId: kept.id, sticky: true };
  if (canary && canaryPoint(canary.id, input.subject) * 100 < (canary.canaryTrafficPct ?? 0)) {
    return { choice: 'canary', baseModel, modelVersionId: canary.id, sticky: false };
  }
  return { choice: 'production', baseModel, modelVersionId: production.id, sticky: false };
}

interface RoutingRow {
  base_model: string | null;
  subject: string;
  current: string | null;
  kept: string | null;
  live: LiveVersion[] | null;
  current_run: string | null;
  canary_run: string | null;
}

/**
 * Routes a task just claimed in `tx` and records the version on it: one read (the role's base model, its
 * live versions, the history row that started its canary's run and the thread's latest routed task) and,
 * when the version or the run changes, one write. A task routed to either version while the base model has
 * a canary carries that canary run (tasks.canary_run_id), which its outcomes count in. Runs in the claim's
 * transaction, so the task is handed out with its version or not at all.
 */
export async function routeClaimedTask(tx: Prisma.TransactionClient, taskId: string): Promise<ModelRouting> {
  const [row] = await tx.$queryRaw<RoutingRow[]>`
    SELECT ar.base_model,
      coalesce(t.thread_id, t.id)::text AS subject,
      t.model_version_id::text AS current,
      t.canary_run_id::text AS current_run,
      (SELECT d.id FROM model_deployments d JOIN model_versions cv ON cv.id = d.model_version_id
        WHERE cv.tenant_id = t.tenant_id AND cv.base_model = ar.base_model
          AND cv.deployment_status = 'canary' AND d.to_status = 'canary'
        ORDER BY d.created_at DESC, d.id DESC LIMIT 1)::text AS canary_run,
      coalesce(t.model_version_id, (
        SELECT p.model_version_id FROM tasks p
        WHERE p.thread_id = t.thread_id AND p.model_version_id IS NOT NULL
        ORDER BY p.created_at DESC, p.id DESC LIMIT 1
      ))::text AS kept,
      (SELECT json_agg(json_build_object(
          'id', mv.id, 'status', mv.deployment_status, 'canaryTrafficPct', mv.canary_traffic_pct))
        FROM model_versions mv
        WHERE mv.tenant_id = t.tenant_id AND mv.base_model = ar.base_model
          AND mv.deployment_status IN ('production', 'canary')) AS live
    FROM tasks t JOIN agent_roles ar ON ar.tenant_id = t.tenant_id AND ar.role = t.role
    WHERE t.id = ${taskId}::uuid`;
  if (!row) throw new Error(`claimed task ${taskId} has no agent role`);
  const routing = chooseModelVersion({
    baseModel: row.base_model,
    live: row.live ?? [],
    kept: row.kept,
    subject: row.subject,
  });
  const run = routing.modelVersionId === null ? null : row.canary_run;
  if (routing.modelVersionId !== row.current || run !== row.current_run) {
    await tx.$executeRaw`
      UPDATE tasks SET model_version_id = ${routing.modelVersionId}::uuid, canary_run_id = ${run}::uuid
      WHERE id = ${taskId}::uuid`;
  }
  return routing;
}

/**
 * Binds an agent role to a base model of the caller's tenant (null unbinds): its next claims route to that
 * base model's production or canary version. 404 for an unknown role or a base model the tenant never
 * registered a version of. Audited.
 */
export async function bindAgentModel(
  context: Actor,
  rawRole: string,
  baseModel: string | null,
): Promise<AgentRole> {
  const { tenantId } = context.viewer;
  const role = normalizeRole(rawRole);
  return context.prisma.$transaction(async (tx) => {
    const current = await tx.agentRole.findUnique({ where: { tenantId_role: { tenantId, role } } });
    if (!current) throw unknownAgentRole(rawRole);
    if (baseModel !== null) {
      const line = await tx.modelLine.findUnique({ where: { tenantId_baseModel: { tenantId, baseModel } } });
      if (!line) throw notFound(`Base model '${baseModel}' not found`);
    }
    const updated = await tx.agentRole.update({ where: { id: current.id }, data: { baseModel } });
    await recordAudit(tx, context, {
      action: 'agent_role.bind_model',
      targetType: 'agent_role',
      targetId: role,
      outcome: baseModel === null ? 'unbound' : 'bound',
      details: { base_model: baseModel, previous_base_model: current.baseModel },
    });
    return updated;
  });
}
