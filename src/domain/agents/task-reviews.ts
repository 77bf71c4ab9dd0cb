import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma, type Task, type TaskReview } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notFound, ownRequest, Refusal } from '../errors.js';
import { countFinishedTasks } from '../finetuning/outcomes.js';
import { checkFailures } from './breakers.js';
import { MAX_ATTEMPTS } from './queue.js';
import { worksFor } from './role-binding.js';
import { TASK_EVENT_COLUMNS, type TaskEventSource, taskEventPayload } from './task-events.js';
import { recordSteps } from './task-steps.js';
import { wakeParents } from './task-tree.js';

/**
 * Reviews (docs/reviews.md): a completion of a task whose role's completion policy names a reviewer role
 * puts the task `in_review`, charged but not yet counted as completed, with a `task_reviews` row; a
 * member, an operator, the chairman or an agent working for the reviewer role accepts it (`completed`) or
 * rejects it (back to `pending`, or `failed` on its last attempt). The agent whose completion it is never
 * decides it.
 */

export const TASK_REVIEW_STATUSES = ['pending', 'accepted', 'rejected', 'cancelled'] as const;
export type TaskReviewStatus = (typeof TASK_REVIEW_STATUSES)[number];

/** Longest acceptance note or rejection reason, in characters. */
export const MAX_REVIEW_NOTE_LENGTH = 2000;

/** The people who review any task of their tenant, as they decide recommendations (DECISIONS.md). */
export function reviewsAnyTask(viewer: Actor['viewer']): boolean {
  return viewer.roles.some((role) => role === 'member' || role === 'operator' || role === 'chairman');
}

/**
 * The CTE (after endRunningTask's `changed`) that opens the review of a completion: the reviewer role as
 * the policy stood, the agent that completed it, the attempt.
 */
export function reviewInsert(reviewerRole: string, requestedBy: string): Prisma.Sql {
  return Prisma.sql`
    review_opened AS (
      INSERT INTO task_reviews (id, tenant_id, task_id, role, reviewer_role, status, requested_by, attempt, created_at)
      SELECT gen_random_uuid(), c.tenant_id, c.id, c.role, ${reviewerRole}, 'pending', ${requestedBy}, c.claims,
        c.updated_at
      FROM changed c
    ),`;
}

/** Prisma `where` of the reviews the viewer may read: any of the tenant's for people, its roles' for an agent. */
export function reviewScope(viewer: Actor['viewer']): Prisma.TaskReviewWhereInput {
  const { tenantId, agentRoles } = viewer;
  if (reviewsAnyTask(viewer) || agentRoles === undefined) return { tenantId };
  return {
    tenantId,
    OR: [{ reviewerRole: { in: [...agentRoles] } }, { role: { in: [...agentRoles] } }],
  };
}

/** The latest review of a task the viewer may read, or null. */
export function latestTaskReview(context: Actor, taskId: string): Promise<TaskReview | null> {
  return context.prisma.taskReview.findFirst({
    where: { taskId, ...reviewScope(context.viewer) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

export type ReviewVerdict =
  | { decision: 'accept'; note?: string | null }
  | { decision: 'reject'; reason: string };

interface LockedReview {
  task_status: string;
  task_role: string;
  parent_task_id: string | null;
  attempts: number;
  review_id: string | null;
  reviewer_role: string | null;
  requested_by: string | null;
}

/**
 * Locks the task and its pending review, and says why the viewer may not decide it: 404 a task of another
 * tenant, or one the viewer's bound token neither works nor reviews for; 409 `task_not_in_review` a task
 * not in review (with its status); 403 `not_reviewer` an agent not working for the reviewer role; 403
 * `own_request` the agent whose completion it is, whatever roles its token has.
 */
async function lockReview(tx: Prisma.TransactionClient, context: Actor, id: string) {
  const { tenantId, sub, agentRoles } = context.viewer;
  const [row] = await tx.$queryRaw<LockedReview[]>`
    SELECT t.status::text AS task_status, t.role AS task_role, t.parent_task_id::text, t.attempts,
      r.id::text AS review_id, r.reviewer_role, r.requested_by
    FROM tasks t
    LEFT JOIN LATERAL (
      SELECT id, reviewer_role, requested_by FROM task_reviews
      WHERE task_id = t.id AND status = 'pending' ORDER BY created_at DESC, id DESC LIMIT 1
    ) r ON true
    WHERE t.id = ${id}::uuid AND t.tenant_id = ${tenantId}::uuid
    FOR UPDATE OF t`;
  const visible =
    row &&
    (agentRoles === undefined ||
      reviewsAnyTask(context.viewer) ||
      agentRoles.includes(row.task_role) ||
      (row.reviewer_role !== null && agentRoles.includes(row.reviewer_role)));
  if (!row || !visible) throw notFound(`Task ${id} not found`);
  if (row.task_status !== 'in_review' || row.review_id === null || row.reviewer_role === null) {
    throw new Refusal('CONFLICT', `Task ${id} is ${row.task_status}, not in_review`, {
      reason: 'task_not_in_review',
      facts: { status: row.task_status },
    });
  }
  if (!reviewsAnyTask(context.viewer) && !worksFor(context.viewer, row.reviewer_role)) {
    throw new Refusal(
      'FORBIDDEN',
      `Task ${id} is reviewed by the role '${row.reviewer_role}', which this token does not work for`,
      { reason: 'not_reviewer', facts: { reviewerRole: row.reviewer_role } },
    );
  }
  if (row.requested_by === sub) throw ownRequest(`The review of task ${id}`, sub);
  return { ...row, review_id: row.review_id, reviewer_role: row.reviewer_role };
}

/**
 * Decides the review of a task `in_review`, in one transaction under the task's row lock (of two deciders,
 * the second finds it decided: 409). Accepting completes it: `completed`, its `finished_at` still the
 * agent's completion (when its cost was charged), counted in its model version's outcomes from then on.
 * Rejecting returns it to the queue (`pending`, no claimer, not finished, attempts kept), or fails it when
 * that was its last attempt (MAX_ATTEMPTS), as a lapsed lease does. Either way: the review row decided,
 * a run-record step, TASK_UPDATED, an audit entry; afterwards a waiting parent may wake, and a failure
 * runs the consecutive-failures breaker.
 */
export async function decideTaskReview(context: Actor, id: string, verdict: ReviewVerdict): Promise<Task> {
  const { tenantId, sub } = context.viewer;
  const note = verdict.decision === 'accept' ? (verdict.note ?? null) : verdict.reason;
  const decided = await context.prisma.$transaction(async (tx) => {
    const locked = await lockReview(tx, context, id);
    const lastAttempt = locked.attempts >= MAX_ATTEMPTS;
    const set =
      verdict.decision === 'accept'
        ? Prisma.sql`status = 'completed'`
        : lastAttempt
          ? Prisma.sql`status = 'failed', error = ${`rejected by ${sub}: ${verdict.reason}`}`
          : Prisma.sql`status = 'pending', claimed_by = NULL, started_at = NULL, finished_at = NULL`;
    const [task] = await tx.$queryRaw<TaskEventSource[]>`
      UPDATE tasks SET ${set}, updated_at = now()
      WHERE id = ${id}::uuid AND status = 'in_review'
      RETURNING ${TASK_EVENT_COLUMNS}`;
    if (!task) throw new Error(`task ${id} left in_review while locked`);
    const status: TaskReviewStatus = verdict.decision === 'accept' ? 'accepted' : 'rejected';
    const outcome = verdict.decision === 'accept' ? null : task.status;
    await tx.$executeRaw`
      UPDATE task_reviews SET status = ${status}, decided_by = ${sub}, decided_at = now(), note = ${note},
        outcome = ${outcome}
      WHERE id = ${locked.review_id}::uuid`;
    if (task.status !== 'pending') await countFinishedTasks(tx, [id]);
    await recordSteps(tx, tenantId, id, [
      {
        kind: verdict.decision === 'accept' ? 'review_accepted' : 'review_rejected',
        actor: sub,
        outcome: task.status,
        reason: note?.slice(0, 200) ?? null,
      },
    ]);
    await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
    await recordAudit(tx, context, {
      action: verdict.decision === 'accept' ? 'task.review.accept' : 'task.review.reject',
      targetType: 'task',
      targetId: id,
      outcome: status,
      details: {
        review_id: locked.review_id,
        role: locked.task_role,
        reviewer_role: locked.reviewer_role,
        task_status: task.status,
        note,
      },
    });
    return task;
  });
  if (decided.status !== 'pending') await wakeParents(context.prisma, tenantId, [decided.parentTaskId]);
  if (decided.status === 'failed') await checkFailures(context, tenantId, decided.role);
  return context.prisma.task.findUniqueOrThrow({ where: { id } });
}
