import { randomUUID } from 'node:crypto';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma, type Task } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, forbidden, notFound, Refusal } from '../errors.js';
import { countFinishedTasks, finishedTaskCounters } from '../finetuning/outcomes.js';
import type { BlobStore } from './blob-store.js';
import { type BreakerContext, checkDuration, checkFailures, checkReaped, checkSpend } from './breakers.js';
import {
  ALERT_EVENTS,
  type BudgetState,
  lockBudgets,
  refusingBudget,
  releaseReservations,
  reserveForTask,
  settlementOf,
  type TaskCost,
  TENANT_BUDGET,
} from './budgets.js';
import { holdBlobs, releaseUnreferencedBlobs } from './chat.js';
import type { ModelStep, TokenUsage } from './completion-rules.js';
import {
  checkCompletionPolicy,
  deliverableDrafts,
  deliverablesInsert,
  type ReceivedDeliverable,
} from './deliverables.js';
import { type ModelRouting, type RoutingChoice, routeClaimedTask } from './model-routing.js';
import { requireWorksFor, roleScopeSql } from './role-binding.js';
import { normalizeRole } from './roles.js';
import {
  announceStepsRecorded,
  stepsRecordedRows,
  TASK_EVENT_COLUMNS,
  type TaskColumns,
  type TaskEventSource,
  taskColumnsOf,
  taskEventPayload,
  taskFromColumns,
  taskUpdatedInsert,
} from './task-events.js';
import { reviewInsert } from './task-reviews.js';
import { chargeStep, modelStepRows, recordSteps, type StepRow, stepsInsert } from './task-steps.js';
import { wakeParents, wakeParentsIn } from './task-tree.js';

/** How long a claim lasts before the task returns to the queue. */
export const DEFAULT_LEASE_MS = 5 * 60 * 1000;
/** Claims a task gets; a lease lapsing on the last one fails the task. */
export const MAX_ATTEMPTS = 3;

export interface ClaimOptions {
  /** Lease duration in milliseconds. Default DEFAULT_LEASE_MS. */
  leaseMs?: number;
}

type ChangedTask = TaskEventSource;

async function announce(tx: Prisma.TransactionClient, tenantId: string, tasks: readonly ChangedTask[]) {
  for (const task of tasks)
    await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
}

/**
 * Running tasks of one role whose lease lapsed go back to `pending`, or end `failed` (finished when the lease
 * ran out) when they used their last attempt. Rows another transaction holds are left for a later pass.
 * Returns the tasks that changed: once their transaction has committed, `checkReapedTasks` runs the
 * breakers on them.
 */
export async function reapExpiredLeases(
  tx: Prisma.TransactionClient,
  tenantId: string,
  role: string,
): Promise<TaskEventSource[]> {
  const changed = await tx.$queryRaw<ChangedTask[]>`
    UPDATE tasks SET
      status = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN 'failed'::"TaskStatus" ELSE 'pending'::"TaskStatus" END,
      finished_at = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN lease_expires_at END,
      error = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN ${`lease expired on the last of ${MAX_ATTEMPTS} attempts`} ELSE error END,
      claimed_by = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN claimed_by END,
      started_at = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN started_at END,
      lease_expires_at = NULL,
      steps_recorded = steps_recorded + 1,
      updated_at = now()
    WHERE id IN (
      SELECT id FROM tasks
      WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'running' AND lease_expires_at < now()
      ORDER BY lease_expires_at
      LIMIT 100
      FOR UPDATE SKIP LOCKED
    )
    RETURNING ${TASK_EVENT_COLUMNS}, tenant_id, steps_recorded, claims`;
  if (changed.length > 0) {
    // One lease_expired step per task, numbered from the steps_recorded the UPDATE raised.
    await tx.$executeRaw`
      INSERT INTO task_steps (id, tenant_id, task_id, seq, attempt, kind, source, started_at, outcome, reason)
      SELECT gen_random_uuid(), ${tenantId}::uuid, t.id, t.steps_recorded, t.claims, 'lease_expired', 'gateway',
        now(), t.status::text, ${'the lease lapsed without a renewal'}
      FROM tasks t WHERE t.id = ANY(${changed.map((task) => task.id)}::uuid[])`;
    await announceStepsRecorded(
      tx,
      tenantId,
      changed.map((task) => task.id),
    );
  }
  await releaseReservations(
    tx,
    tenantId,
    role,
    changed.map((task) => task.id),
  );
  const failed = changed.filter((task) => task.status === 'failed');
  await countFinishedTasks(
    tx,
    failed.map((task) => task.id),
  );
  await announce(tx, tenantId, changed);
  await wakeParentsIn(
    tx,
    tenantId,
    failed.map((task) => task.parentTaskId),
  );
  return changed;
}

/** The breakers on tasks reapExpiredLeases changed (attempts, then consecutive failures), after its commit. */
export const checkReapedTasks = (
  context: BreakerContext,
  tenantId: string,
  tasks: readonly TaskEventSource[],
) => (tasks.length === 0 ? Promise.resolve() : checkReaped(context, tenantId, tasks, MAX_ATTEMPTS));

/** Why a claim ended as it did: `claimed`, or the first reason there was nothing to hand out. */
export type ClaimOutcome =
  | 'claimed'
  | 'queue_empty'
  | 'role_paused'
  | 'role_budget_exhausted'
  | 'tenant_budget_exhausted';

export interface ClaimResult {
  outcome: ClaimOutcome;
  task: Task | null;
  /** The budget that refused the claim, as it stood. */
  budget: BudgetState | null;
  /** How the claimed task's model version was chosen; null when nothing was claimed. */
  routing: ModelRouting | null;
}

/**
 * Hands the oldest pending task of a role to the calling agent (403 for a role its token is not bound to:
 * role-binding.ts), or says why it cannot: the role is paused,
 * the tenant's or the role's budget has no room for one more task's estimate, or nothing is pending (checked
 * in that order). Each task goes to exactly one caller: the row is locked and rows other claimers hold are
 * skipped. The budgets are locked while the task is handed out, and the task's estimate is reserved in the
 * same statement that hands it out, so spent + reserved never passes a limit. A refusal writes nothing.
 */
export async function claimNextTask(
  context: Actor,
  rawRole: string,
  options: ClaimOptions = {},
): Promise<ClaimResult> {
  const role = normalizeRole(rawRole);
  requireWorksFor(context.viewer, role);
  // The claim that hands out a task is one statement on its own (autocommit): the budget rows it locks are
  // held for that statement and its commit, never across a round trip to the gateway. Only when it hands
  // out nothing does the claim go on, in a transaction, to reap lapsed leases and say why.
  const fast = await claimInOneStatement(context.prisma, context, role, options);
  if (fast) return fast;
  const reaped: TaskEventSource[] = [];
  const result = await context.prisma.$transaction((tx) =>
    claimInTransaction(tx, context, role, options, reaped),
  );
  await checkReapedTasks(context, context.viewer.tenantId, reaped);
  return result;
}

/** The claimed task (taskColumnsOf) with how the claim routed it. */
type FastClaimRow = TaskColumns & {
  choice: RoutingChoice;
  base_model: string | null;
  routed_version_id: string | null;
  sticky: boolean;
};

/**
 * The claim when it hands out a task and nothing needs reaping, as one statement that is its own
 * transaction (no round trip to the gateway while it holds the budget rows): it locks the role (share) while it is not paused and finds
 * no lapsed lease of the role, takes the oldest pending task (skipping rows other claimers hold, so it
 * never waits for a task), then locks the role's and the tenant's budgets in id order, reading them as
 * they stand once locked, and checks that each admits the task's estimate (rolling an ended period over
 * as budgetState does). Only then does it claim the task, route it as chooseModelVersion does (the
 * canary's point is assignmentPoint's, from the same SHA-256, computed in SQL), reserve the estimates and
 * write TASK_UPDATED to the outbox. The task is picked before the budgets are waited for: a statement
 * sees the rows of its start, so a task picked after a wait would be picked from a stale queue.
 * Null when it claimed nothing, for whatever reason: claimInTransaction then reaps, decides and says why.
 * `db` is the client, not a transaction: inside one, the budget rows would be held until its COMMIT.
 */
async function claimInOneStatement(
  db: Prisma.TransactionClient,
  context: Actor,
  role: string,
  { leaseMs = DEFAULT_LEASE_MS }: ClaimOptions,
): Promise<ClaimResult | null> {
  const { tenantId, sub } = context.viewer;
  const eventId = randomUUID();
  // The statement answers with the whole task, so nothing is read after it: a claim whose answer is lost is
  // one whose statement's answer is lost, as for any commit, and its task's lease lapses (no read after the
  // commit that may find no pool connection while the task stays claimed). When it claims nothing it has
  // written nothing.
  const [row] = await db.$queryRaw<FastClaimRow[]>`
  WITH open_role AS MATERIALIZED (
    SELECT base_model FROM agent_roles
    WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND NOT paused
      AND NOT EXISTS (
        SELECT 1 FROM tasks
        WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'running' AND lease_expires_at < now())
    FOR SHARE
  ),
  candidate AS MATERIALIZED (
    SELECT id, thread_id, model_version_id FROM tasks
    WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'pending'
      AND EXISTS (SELECT 1 FROM open_role)
    ORDER BY created_at, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
  ),
  budget_rows AS MATERIALIZED (
    SELECT b.id,
      CASE WHEN b.period_start < p.current_start THEN 0 ELSE b.spent_usd END AS spent_usd,
      CASE WHEN b.period_start < p.current_start THEN 0 ELSE b.spent_tokens END AS spent_tokens,
      b.reserved_usd, b.reserved_tokens, b.estimate_usd, b.estimate_tokens, b.limit_usd, b.limit_tokens,
      p.current_start
    FROM budgets b
    CROSS JOIN LATERAL (
      SELECT (date_trunc(CASE WHEN b.period = 'month' THEN 'month' ELSE 'day' END, now() AT TIME ZONE 'UTC')
        AT TIME ZONE 'UTC') AS current_start
    ) p
    WHERE b.tenant_id = ${tenantId}::uuid AND b.role IN (${role}, ${TENANT_BUDGET})
      AND EXISTS (SELECT 1 FROM candidate)
    ORDER BY b.id
    FOR UPDATE OF b
  ),
  admitted AS MATERIALIZED (
    SELECT NOT EXISTS (
      SELECT 1 FROM budget_rows
      WHERE spent_usd + reserved_usd + estimate_usd > limit_usd
        OR (limit_tokens IS NOT NULL AND spent_tokens + reserved_tokens + estimate_tokens > limit_tokens)
    ) AS ok
  ),
  routed AS MATERIALIZED (
    SELECT c.id, r.base_model, coalesce(c.thread_id, c.id)::text AS subject,
      coalesce(c.model_version_id, (
        SELECT p.model_version_id FROM tasks p
        WHERE p.thread_id = c.thread_id AND p.model_version_id IS NOT NULL
        ORDER BY p.created_at DESC, p.id DESC LIMIT 1
      )) AS kept_id
    FROM candidate c CROSS JOIN open_role r
    WHERE (SELECT ok FROM admitted)
  ),
  live AS MATERIALIZED (
    SELECT mv.id, mv.deployment_status::text AS status, mv.canary_traffic_pct
    FROM model_versions mv JOIN open_role r ON mv.base_model = r.base_model
    WHERE mv.tenant_id = ${tenantId}::uuid AND mv.deployment_status IN ('production', 'canary')
  ),
  chosen AS MATERIALIZED (
    SELECT r.id AS task_id, r.base_model,
      CASE
        WHEN r.base_model IS NULL THEN 'unbound'
        WHEN production.id IS NULL THEN 'no_production'
        WHEN kept.id IS NOT NULL THEN kept.status
        WHEN canary.id IS NOT NULL AND (('x' || substr(encode(sha256(convert_to(
            canary.id::text || ':' || r.subject, 'UTF8')), 'hex'), 1, 13))::bit(52)::bigint)::float8
            / 4503599627370496::float8 * 100::float8 < coalesce(canary.canary_traffic_pct, 0)::float8
          THEN 'canary'
        ELSE 'production'
      END AS choice,
      kept.id IS NOT NULL AND production.id IS NOT NULL AS sticky,
      production.id AS production_id, canary.id AS canary_id, kept.id AS kept_id, run.id AS canary_run_id
    FROM routed r
    LEFT JOIN LATERAL (SELECT id FROM live WHERE status = 'production' LIMIT 1) production ON true
    LEFT JOIN LATERAL (SELECT id, canary_traffic_pct FROM live WHERE status = 'canary' LIMIT 1) canary ON true
    LEFT JOIN LATERAL (SELECT id, status FROM live WHERE id = r.kept_id) kept ON true
    -- The history row that started the canary's run, as routeClaimedTask reads it.
    LEFT JOIN LATERAL (
      SELECT d.id FROM model_deployments d
      WHERE d.model_version_id = canary.id AND d.to_status = 'canary'
      ORDER BY d.created_at DESC, d.id DESC LIMIT 1
    ) run ON true
  ),
  versioned AS MATERIALIZED (
    SELECT task_id, base_model, choice, sticky,
      CASE choice
        WHEN 'production' THEN CASE WHEN sticky THEN kept_id ELSE production_id END
        WHEN 'canary' THEN CASE WHEN sticky THEN kept_id ELSE canary_id END
      END AS model_version_id,
      canary_run_id
    FROM chosen
  ),
  claimed AS (
    UPDATE tasks t SET
      status = 'running', attempts = t.attempts + 1, claimed_by = ${sub}, started_at = now(),
      lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond', updated_at = now(),
      claims = t.claims + 1, steps_recorded = t.steps_recorded + 1,
      model_version_id = v.model_version_id,
      canary_run_id = CASE WHEN v.model_version_id IS NULL THEN NULL ELSE v.canary_run_id END
    FROM versioned v
    WHERE t.id = v.task_id
    RETURNING t.*
  ),
  reserved AS (
    UPDATE budgets b SET
      period_start = greatest(b.period_start, br.current_start),
      spent_usd = CASE WHEN b.period_start < br.current_start THEN 0 ELSE b.spent_usd END,
      spent_tokens = CASE WHEN b.period_start < br.current_start THEN 0 ELSE b.spent_tokens END,
      overshoot_usd = CASE WHEN b.period_start < br.current_start THEN 0 ELSE b.overshoot_usd END,
      warned_at = CASE WHEN b.period_start < br.current_start THEN NULL ELSE b.warned_at END,
      exhausted_at = CASE WHEN b.period_start < br.current_start THEN NULL ELSE b.exhausted_at END,
      reserved_usd = b.reserved_usd + b.estimate_usd,
      reserved_tokens = b.reserved_tokens + b.estimate_tokens,
      updated_at = now()
    FROM budget_rows br
    WHERE b.id = br.id AND EXISTS (SELECT 1 FROM claimed)
    RETURNING b.id
  ),
  reservations AS (
    INSERT INTO budget_reservations (task_id, budget_id, amount_usd, tokens)
    SELECT c.id, br.id, br.estimate_usd, br.estimate_tokens FROM claimed c CROSS JOIN budget_rows br
    RETURNING budget_id
  ),
  claim_step AS (
    ${stepsInsert('claimed', [{ kind: 'claimed', actor: sub }], {
      modelVersionId: Prisma.sql`c.model_version_id`,
      routing: Prisma.sql`(SELECT choice FROM versioned)`,
    })}
  )
  ${taskUpdatedInsert(eventId, tenantId, 'claimed')}
  UNION ALL ${stepsRecordedRows(tenantId, 'claimed')}
  RETURNING ${taskColumnsOf('claimed')},
    (SELECT choice FROM versioned) AS choice,
    (SELECT base_model FROM versioned) AS base_model,
    (SELECT model_version_id::text FROM versioned) AS routed_version_id,
    (SELECT sticky FROM versioned) AS sticky`;
  if (!row) return null;
  const { choice, base_model, routed_version_id, sticky, ...task } = row;
  return {
    outcome: 'claimed' as const,
    task: taskFromColumns(task),
    budget: null,
    routing: { choice, baseModel: base_model, modelVersionId: routed_version_id, sticky },
  };
}

/**
 * The claim statement by statement, in the claim's transaction after claimInOneStatement handed out
 * nothing: reaps lapsed leases first, and says why it claimed nothing.
 */
async function claimInTransaction(
  tx: Prisma.TransactionClient,
  context: Actor,
  role: string,
  { leaseMs = DEFAULT_LEASE_MS }: ClaimOptions,
  reaped: TaskEventSource[],
): Promise<ClaimResult> {
  const { tenantId, sub } = context.viewer;
  // A share lock, so a pause committing meanwhile waits for this claim and no claim follows it.
  const [agentRole] = await tx.$queryRaw<{ paused: boolean }[]>`
    SELECT paused FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR SHARE`;
  if (!agentRole) throw notFound(`Unknown agent role '${role}'`);
  reaped.push(...(await reapExpiredLeases(tx, tenantId, role)));
  if (agentRole.paused) return { outcome: 'role_paused', task: null, budget: null, routing: null };
  const budgets = await lockBudgets(tx, tenantId, role);
  const refusing = refusingBudget(budgets);
  if (refusing) {
    const outcome = refusing.role === null ? 'tenant_budget_exhausted' : 'role_budget_exhausted';
    return { outcome, task: null, budget: refusing, routing: null };
  }
  const [task] = await tx.$queryRaw<ChangedTask[]>`
    UPDATE tasks SET
      status = 'running', attempts = attempts + 1, claimed_by = ${sub}, started_at = now(),
      lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond', updated_at = now(),
      claims = claims + 1
    WHERE id = (
      SELECT id FROM tasks
      WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'pending'
      ORDER BY created_at, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING ${TASK_EVENT_COLUMNS}`;
  if (!task) return { outcome: 'queue_empty', task: null, budget: null, routing: null };
  await reserveForTask(tx, budgets, task.id);
  const routing = await routeClaimedTask(tx, task.id);
  await recordSteps(tx, tenantId, task.id, [
    { kind: 'claimed', actor: sub, model_version_id: routing.modelVersionId, routing: routing.choice },
  ]);
  await announce(tx, tenantId, [task]);
  return {
    outcome: 'claimed',
    task: await tx.task.findUniqueOrThrow({ where: { id: task.id } }),
    budget: null,
    routing,
  };
}

/** claimNextTask's task: null when nothing is claimable, whatever the reason. */
export async function claimTask(context: Actor, rawRole: string, options: ClaimOptions = {}) {
  return (await claimNextTask(context, rawRole, options)).task;
}

interface LockedTask {
  status: string;
  claimed_by: string | null;
}

/**
 * Locks a running task of the caller's tenant that the caller claimed; 404 (also a task of a role the
 * caller's token is not bound to), 403 or 409 otherwise.
 */
export async function lockOwnRunningTask(tx: Prisma.TransactionClient, context: Actor, id: string) {
  const [task] = await tx.$queryRaw<LockedTask[]>`
    SELECT status::text, claimed_by FROM tasks
    WHERE id = ${id}::uuid AND tenant_id = ${context.viewer.tenantId}::uuid ${roleScopeSql(context.viewer)}
    FOR UPDATE`;
  if (!task) throw notFound(`Task ${id} not found`);
  if (task.status !== 'running') throw conflict(`Task ${id} is ${task.status}, not running`);
  if (task.claimed_by !== context.viewer.sub) throw forbidden(`Task ${id} is claimed by another agent`);
}

export interface RecommendationDraft {
  summary: string;
  predictedOutcome?: string | null | undefined;
}

export interface CompletionReport {
  output?: string | null | undefined;
  tokensUsed: number;
  /** US dollars; stored exactly to the micro-dollar. */
  costUsd: number;
  recommendations?: readonly RecommendationDraft[] | null | undefined;
  /** The breakdown of tokensUsed by kind, already checked to add up (completion-rules.ts). */
  usage?: TokenUsage | null | undefined;
  /** Evidence for "done", already checked (deliverables.ts). */
  deliverables?: readonly ReceivedDeliverable[] | null | undefined;
  /** The attempt's model calls not reported before, recorded ahead of the completion (completion-rules.ts). */
  steps?: readonly ModelStep[] | null | undefined;
}

/**
 * Ends the caller's running task in one statement that is its own transaction, so the rows other
 * transactions wait for (its version's counters, the role's and the tenant's budgets) are held for that
 * statement and never across a round trip to the gateway: `set` changes the task, `extra` (CTEs) adds to
 * it, it counts in its version's counters (finishedTaskCounters), is settled against its budgets (its cost
 * charged with the alerts and audit rows that follow, or only its reservation freed: settlementOf) and
 * announced (TASK_UPDATED, then the budgets' alerts, in the outbox). It changes nothing unless the task is
 * the caller's tenant's (of a role its token works for), running and the caller's: lockOwnRunningTask then
 * says which of 404, 409 and 403 it is. Answers with the task. `db` is the client, or the transaction of a
 * caller that does more in it (delegation); `ends: false` leaves `finished_at` alone (a task that waits).
 */
export async function endRunningTask(
  db: Prisma.TransactionClient,
  context: Actor,
  id: string,
  set: Prisma.Sql,
  cost: TaskCost | null,
  {
    extra = Prisma.empty,
    ends = true,
    steps = [],
  }: { extra?: Prisma.Sql; ends?: boolean; steps?: readonly StepRow[] } = {},
): Promise<Task> {
  const { tenantId, sub } = context.viewer;
  const eventId = randomUUID();
  const charge = cost ? { cost, actor: { sub, requestId: context.requestId } } : null;
  const [row] = await db.$queryRaw<TaskColumns[]>`
    WITH changed AS (
      UPDATE tasks SET ${set}, ${ends ? Prisma.sql`finished_at = now(),` : Prisma.empty}
        lease_expires_at = NULL, steps_recorded = steps_recorded + ${steps.length}::int, updated_at = now()
      WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid AND status = 'running' AND claimed_by = ${sub}
        ${roleScopeSql(context.viewer)}
      RETURNING *
    ),
    ${steps.length === 0 ? Prisma.empty : Prisma.sql`stepped AS (${stepsInsert('changed', steps)}),`}
    ${extra}
    ${finishedTaskCounters('changed')},
    ${settlementOf(tenantId, 'changed', charge)}
    ${taskUpdatedInsert(eventId, tenantId, 'changed')}
    ${steps.length === 0 ? Prisma.empty : Prisma.sql`UNION ALL ${stepsRecordedRows(tenantId, 'changed')}`}
    UNION ALL ${ALERT_EVENTS}
    RETURNING ${taskColumnsOf('changed')}`;
  if (!row) {
    if (db === context.prisma) await context.prisma.$transaction((tx) => lockOwnRunningTask(tx, context, id));
    else await lockOwnRunningTask(db, context, id);
    throw conflict(`Task ${id} is no longer running`);
  }
  return taskFromColumns(row);
}

/**
 * The SET items that add a report's usage to a task's: a task that delegated and then resumed reports each
 * attempt's work, and its totals are their sums. The breakdown adds up when every report gave one.
 */
export function usageAdded(report: {
  tokensUsed: number;
  costUsd: number;
  usage?: TokenUsage | null | undefined;
}): Prisma.Sql {
  const add = (column: string, count: number | null | undefined) =>
    count === null || count === undefined
      ? Prisma.raw(column)
      : Prisma.sql`coalesce(${Prisma.raw(column)}, 0) + ${BigInt(count)}`;
  const usage = report.usage;
  return Prisma.sql`
    tokens_used = coalesce(tokens_used, 0) + ${BigInt(report.tokensUsed)},
    cost_usd = coalesce(cost_usd, 0) + ${report.costUsd.toFixed(6)}::numeric,
    input_tokens = ${add('input_tokens', usage?.inputTokens)},
    cached_input_tokens = ${add('cached_input_tokens', usage ? (usage.cachedInputTokens ?? 0) : null)},
    output_tokens = ${add('output_tokens', usage?.outputTokens)},
    reasoning_tokens = ${add('reasoning_tokens', usage ? (usage.reasoningTokens ?? 0) : null)}`;
}

/**
 * Ends the caller's running task as `completed`, with its usage, output, recommendations and deliverables;
 * a task that delegated and resumed adds this attempt's usage to what it reported before. A parent waiting
 * for it may be woken. A completion without deliverables of a role that requires one is refused before
 * anything is written (checkCompletionPolicy). When the role's policy names a reviewer role, the task ends
 * `in_review` instead, charged and finished but not yet completed, with its review opened
 * (task-reviews.ts): it counts as completed once accepted. FILE deliverables are stored in `blobs` as chat attachments
 * are, under the same lock, and removed again when the completion is refused and nothing else uses them.
 */
export async function completeTask(
  context: Actor,
  id: string,
  report: CompletionReport,
  blobs?: BlobStore,
): Promise<Task> {
  const recommendations = report.recommendations ?? [];
  const drafts = deliverableDrafts(report.deliverables ?? []);
  const { reviewerRole } = await checkCompletionPolicy(context, id, drafts.length);
  const modelCalls = await modelStepRows(context, report.steps ?? []);
  const charged = await chargeStep(context, id, 'completed', report, modelCalls);
  const steps: StepRow[] = reviewerRole
    ? [
        ...modelCalls,
        { ...charged, outcome: 'in_review' },
        { kind: 'review_requested', actor: context.viewer.sub, reason: `reviewer role ${reviewerRole}` },
      ]
    : [...modelCalls, charged];
  const status = reviewerRole ? Prisma.sql`'in_review'` : Prisma.sql`'completed'`;
  const end = (db: Prisma.TransactionClient) =>
    endRunningTask(
      db,
      context,
      id,
      Prisma.sql`status = ${status}, output = ${report.output ?? null}, ${usageAdded(report)}`,
      { costUsd: new Prisma.Decimal(report.costUsd.toFixed(6)), tokens: BigInt(report.tokensUsed) },
      {
        steps,
        extra: Prisma.sql`${deliverablesInsert(drafts)}${
          reviewerRole ? reviewInsert(reviewerRole, context.viewer.sub) : Prisma.empty
        }${
          recommendations.length === 0
            ? Prisma.empty
            : // Recommendations have no position column: a millisecond apart from the task's finish (now(),
              // the statement's time), they read back in the reported order.
              Prisma.sql`
          recommended AS (
            INSERT INTO recommendations (id, tenant_id, task_id, role, summary, predicted_outcome, created_at)
            SELECT gen_random_uuid(), c.tenant_id, c.id, c.role, r.summary, r.predicted_outcome,
              c.updated_at + (r.position - 1) * interval '1 millisecond'
            FROM changed c, unnest(
              ${recommendations.map((draft) => draft.summary)}::text[],
              ${recommendations.map((draft) => draft.predictedOutcome ?? null)}::text[]
            ) WITH ORDINALITY AS r(summary, predicted_outcome, position)
          ),`
        }`,
      },
    );
  const files = drafts.flatMap((draft) => (draft.file ? [draft.file] : []));
  let task: Task;
  if (files.length === 0) task = await end(context.prisma);
  else {
    if (!blobs) throw new Error('FILE deliverables need the blob store');
    try {
      task = await context.prisma.$transaction(async (tx) => {
        await holdBlobs(tx, blobs, files);
        return end(tx);
      });
    } catch (error) {
      await releaseUnreferencedBlobs(
        context,
        blobs,
        files.map((file) => file.sha256),
      );
      throw error;
    }
  }
  await wakeParents(context.prisma, context.viewer.tenantId, [task.parentTaskId]);
  if (report.costUsd > 0) await checkSpend(context, context.viewer.tenantId, task.role);
  await checkDuration(context, context.viewer.tenantId, task, 'completed');
  return task;
}

/** Ends the caller's running task as `failed` at once, whatever attempts remain; its waiting parent may wake. */
export async function failTask(context: Actor, id: string, error: string): Promise<Task> {
  const task = await endRunningTask(
    context.prisma,
    context,
    id,
    Prisma.sql`status = 'failed', error = ${error}`,
    null,
    { steps: [{ kind: 'failed', actor: context.viewer.sub, reason: error }] },
  );
  await wakeParents(context.prisma, context.viewer.tenantId, [task.parentTaskId]);
  await checkFailures(context, context.viewer.tenantId, task.role);
  await checkDuration(context, context.viewer.tenantId, task, 'failed');
  return task;
}

/**
 * Gives the caller's running task back to the queue, as an agent runtime that stops before finishing does:
 * `pending` again, without claimer or lease, its budget reservation released, and the claim not counted
 * against its attempts; the next claim of the role, on any instance, takes it (a waiting claim is woken).
 * 404 another tenant's task, 409 a task not running, 403 another agent's, as for completeTask; a refusal
 * changes nothing.
 */
export function releaseTask(context: Actor, id: string): Promise<Task> {
  return context.prisma.$transaction(async (tx) => {
    await lockOwnRunningTask(tx, context, id);
    const [changed] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET
        status = 'pending', claimed_by = NULL, started_at = NULL, lease_expires_at = NULL,
        attempts = GREATEST(attempts - 1, 0), updated_at = now()
      WHERE id = ${id}::uuid
      RETURNING ${TASK_EVENT_COLUMNS}`;
    if (!changed) throw new Error(`task ${id} vanished while locked`);
    await releaseReservations(tx, context.viewer.tenantId, changed.role, [changed.id]);
    await recordSteps(tx, context.viewer.tenantId, id, [{ kind: 'released', actor: context.viewer.sub }]);
    await announce(tx, context.viewer.tenantId, [changed]);
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
}

/**
 * Extends the lease of the caller's running task to DEFAULT_LEASE_MS (or `leaseMs`) from now. Refused, and
 * nothing changes, when the task is not the caller's tenant's (404), not running (409, `task_not_running`:
 * the sweeper may already have returned it to the queue), held by another agent (403), or when its lease
 * has already lapsed (409, `lease_expired`): the task may have been handed out again, so the agent must stop.
 * Publishes nothing: the lease is not part of TASK_UPDATED's payload.
 */
export async function renewTaskLease(
  context: Actor,
  id: string,
  { leaseMs = DEFAULT_LEASE_MS }: ClaimOptions = {},
): Promise<Task> {
  return context.prisma.$transaction(async (tx) => {
    const [task] = await tx.$queryRaw<(LockedTask & { lapsed: boolean })[]>`
      SELECT status::text, claimed_by, lease_expires_at < now() AS lapsed
      FROM tasks
      WHERE id = ${id}::uuid AND tenant_id = ${context.viewer.tenantId}::uuid ${roleScopeSql(context.viewer)}
      FOR UPDATE`;
    if (!task) throw notFound(`Task ${id} not found`);
    if (task.status !== 'running') {
      throw new Refusal('CONFLICT', `Task ${id} is ${task.status}, not running`, {
        reason: 'task_not_running',
        facts: { status: task.status },
      });
    }
    if (task.claimed_by !== context.viewer.sub) throw forbidden(`Task ${id} is claimed by another agent`);
    if (task.lapsed) {
      throw new Refusal('CONFLICT', `The lease of task ${id} has already lapsed`, {
        reason: 'lease_expired',
        facts: { status: task.status },
      });
    }
    await tx.$executeRaw`
      UPDATE tasks SET lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond', updated_at = now()
      WHERE id = ${id}::uuid`;
    await recordSteps(tx, context.viewer.tenantId, id, [
      { kind: 'lease_renewed', actor: context.viewer.sub },
    ]);
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
}
