import { recordAudit } from '../../audit.js';
import type { PrismaClient } from '../../db/client.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Prisma, TaskApproval } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notFound, ownRequest, Refusal } from '../errors.js';
import { releaseReservations } from './budgets.js';
import { lockOwnRunningTask } from './queue.js';
import { roleScope } from './role-binding.js';
import { TASK_EVENT_COLUMNS, type TaskEventSource, taskEventPayload } from './task-events.js';
import { recordSteps } from './task-steps.js';

/** Longest summary of a decision request, in characters. */
export const MAX_APPROVAL_SUMMARY_LENGTH = 2000;
/** Largest payload of a decision request, in bytes of its JSON. */
export const MAX_APPROVAL_PAYLOAD_BYTES = 64 * 1024;
/** Longest decision note, in characters. */
export const MAX_APPROVAL_NOTE_LENGTH = 2000;

/** Shortest wait a request may ask for, in seconds. */
export const TASK_APPROVAL_EXPIRY_MIN_SECONDS = 60;
/** Longest wait a request may ask for, in seconds (30 days). */
export const TASK_APPROVAL_EXPIRY_MAX_SECONDS = 30 * 24 * 3600;
/** How long a request waits when it does not say (24 hours). */
export const TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS = 24 * 3600;

export const TASK_APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'changes_requested',
  'expired',
] as const;
export type TaskApprovalStatus = (typeof TASK_APPROVAL_STATUSES)[number];
export type TaskDecision = 'approve' | 'reject' | 'request_changes';

const STATUS_OF: Record<TaskDecision, TaskApprovalStatus> = {
  approve: 'approved',
  reject: 'rejected',
  request_changes: 'changes_requested',
};

type ChangedTask = TaskEventSource;

/** The status a reader sees: a pending request past its expiry is expired, swept or not. */
export function effectiveTaskApprovalStatus(
  row: Pick<TaskApproval, 'status' | 'expiresAt'>,
  now = new Date(),
): TaskApprovalStatus {
  if (row.status === 'pending' && row.expiresAt <= now) return 'expired';
  return row.status as TaskApprovalStatus;
}

/** What TASK_APPROVAL_REQUESTED and TASK_APPROVAL_DECIDED carry: ids and states, never summary, payload or note. */
export function taskApprovalPayload(row: TaskApproval) {
  return {
    approval_id: row.id,
    task_id: row.taskId,
    role: row.role,
    status: effectiveTaskApprovalStatus(row),
    requested_by: row.requestedBy,
    decided_by: row.decidedBy,
  };
}

export interface ApprovalRequest {
  summary: string;
  payload: unknown;
  /** How long the request waits for a decision; TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS when absent. */
  expiresInSeconds?: number | null | undefined;
}

/**
 * The agent holding a running task asks for a decision: in one transaction the task becomes
 * `awaiting_approval` (no lease; its budget reservation released; the claim that asked does not count
 * against the task's attempts) and the request is stored. 404 another tenant's task, 409 a task not
 * running, 403 another agent's, as for completeTask; a refusal changes nothing.
 */
export async function requestTaskApproval(
  context: Actor,
  taskId: string,
  request: ApprovalRequest,
): Promise<TaskApproval> {
  const { tenantId, sub } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    await lockOwnRunningTask(tx, context, taskId);
    const [task] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET
        status = 'awaiting_approval', lease_expires_at = NULL, attempts = GREATEST(attempts - 1, 0),
        updated_at = now()
      WHERE id = ${taskId}::uuid
      RETURNING ${TASK_EVENT_COLUMNS}`;
    if (!task) throw new Error(`task ${taskId} vanished while locked`);
    await releaseReservations(tx, tenantId, task.role, [task.id]);
    // One instant for both, so the request waits exactly what it asked for.
    const now = new Date();
    const approval = await tx.taskApproval.create({
      data: {
        tenantId,
        taskId,
        role: task.role,
        summary: request.summary,
        payload: request.payload as Prisma.InputJsonValue,
        requestedBy: sub,
        createdAt: now,
        expiresAt: new Date(
          now.getTime() + (request.expiresInSeconds ?? TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS) * 1000,
        ),
      },
    });
    await recordSteps(tx, tenantId, taskId, [
      {
        kind: 'approval_requested',
        actor: sub,
        approval_id: approval.id,
        reason: request.summary.slice(0, 200),
      },
    ]);
    await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
    await enqueueEvent(tx, {
      type: 'TASK_APPROVAL_REQUESTED',
      tenantId,
      payload: taskApprovalPayload(approval),
    });
    await recordAudit(tx, context, {
      action: 'task_approval.request',
      targetType: 'task_approval',
      targetId: approval.id,
      outcome: 'requested',
      details: { task_id: taskId, role: task.role, expires_at: approval.expiresAt.toISOString() },
    });
    return approval;
  });
}

/** Whether the viewer reads every request of the tenant (approvers) or only its own (an agent). */
export function decidesTaskApprovals(viewer: Actor['viewer']): boolean {
  return viewer.roles.includes('chairman') || viewer.roles.includes('operator');
}

/** A request the viewer may read: any of the tenant's for an approver, its own for an agent; 404 otherwise. */
export async function findTaskApproval(context: Actor, id: string): Promise<TaskApproval> {
  const row = await context.prisma.taskApproval.findFirst({
    where: {
      id,
      ...roleScope(context.viewer),
      ...(decidesTaskApprovals(context.viewer) ? {} : { requestedBy: context.viewer.sub }),
    },
  });
  if (!row) throw notFound(`Task approval ${id} not found`);
  return row;
}

export interface TaskDecisionCommand {
  id: string;
  decision: TaskDecision;
  note?: string | null | undefined;
}

/** A request nobody decided in time: 409 with its state. */
function expired(row: TaskApproval) {
  return new Refusal(
    'CONFLICT',
    `Task approval ${row.id} expired at ${row.expiresAt.toISOString()}; its status is expired`,
    { reason: 'approval_expired', facts: { status: 'expired' } },
  );
}

/**
 * Decides a waiting request (chairman or operator, never the agent that asked, whatever roles its token
 * has: FORBIDDEN `own_request`): one conditional UPDATE (status still `pending`, not
 * expired), so of two deciders exactly one wins, and the task returns to `pending` with the decision
 * readable on it (`Task.approval`), which wakes a claim waiting for the role. A request already decided
 * answers its first decision unchanged and writes nothing; an expired one is CONFLICT with its status.
 * Audited; publishes TASK_APPROVAL_DECIDED and TASK_UPDATED.
 */
export async function decideTaskApproval(
  context: Actor,
  command: TaskDecisionCommand,
): Promise<TaskApproval> {
  const { tenantId, sub } = context.viewer;
  const request = await findTaskApproval(context, command.id);
  if (request.requestedBy === sub) throw ownRequest(`Task approval ${request.id}`, sub);
  const won = await context.prisma.$transaction(async (tx) => {
    const status = STATUS_OF[command.decision];
    const decided = await tx.taskApproval.updateManyAndReturn({
      where: { id: command.id, tenantId, status: 'pending', expiresAt: { gt: new Date() } },
      data: { status, decidedBy: sub, decidedAt: new Date(), note: command.note ?? null },
    });
    const approval = decided[0];
    if (!approval) return null;
    await requeueTask(tx, tenantId, approval.taskId);
    await recordSteps(tx, tenantId, approval.taskId, [
      {
        kind: 'approval_decided',
        actor: sub,
        approval_id: approval.id,
        outcome: status,
        reason: approval.note,
      },
    ]);
    await enqueueEvent(tx, {
      type: 'TASK_APPROVAL_DECIDED',
      tenantId,
      payload: taskApprovalPayload(approval),
    });
    await recordAudit(tx, context, {
      action: 'task_approval.decide',
      targetType: 'task_approval',
      targetId: approval.id,
      outcome: status,
      details: { task_id: approval.taskId, role: approval.role, note: approval.note },
    });
    return approval;
  });
  if (won) return won;
  // Someone decided first, or nobody did in time: answer what the request is now.
  await expireTaskApprovals(context.prisma, { id: command.id });
  const current = await context.prisma.taskApproval.findUniqueOrThrow({ where: { id: command.id } });
  if (effectiveTaskApprovalStatus(current) === 'expired') throw expired(current);
  return current;
}

/** Puts a task that waited for a decision back in the queue, announced as TASK_UPDATED. */
async function requeueTask(tx: Prisma.TransactionClient, tenantId: string, taskId: string): Promise<void> {
  const [task] = await tx.$queryRaw<ChangedTask[]>`
    UPDATE tasks SET
      status = 'pending', claimed_by = NULL, started_at = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE id = ${taskId}::uuid AND tenant_id = ${tenantId}::uuid AND status = 'awaiting_approval'
    RETURNING ${TASK_EVENT_COLUMNS}`;
  if (task) await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
}

/**
 * Expires the requests (of one id, or all) still pending past their expiry: each task returns to the
 * queue with the expired request readable in `Task.approval`, with one audit row (actor `system`) and one
 * TASK_APPROVAL_DECIDED event. The UPDATE's `status = 'pending'` lets only one sweep or decision end a row,
 * however many instances sweep at once.
 */
export async function expireTaskApprovals(
  prisma: PrismaClient,
  where: { id?: string } = {},
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE task_approvals SET status = 'expired', updated_at = now()
      WHERE status = 'pending' AND expires_at <= now()
        AND (${where.id ?? null}::uuid IS NULL OR id = ${where.id ?? null}::uuid)
      RETURNING id::text`;
    if (rows.length === 0) return 0;
    const ended = await tx.taskApproval.findMany({
      where: { id: { in: rows.map((row) => row.id) } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    for (const row of ended) {
      await requeueTask(tx, row.tenantId, row.taskId);
      await recordSteps(tx, row.tenantId, row.taskId, [
        { kind: 'approval_decided', actor: 'system', approval_id: row.id, outcome: 'expired' },
      ]);
      await enqueueEvent(tx, {
        type: 'TASK_APPROVAL_DECIDED',
        tenantId: row.tenantId,
        payload: taskApprovalPayload(row),
      });
      await tx.auditEntry.create({
        data: {
          tenantId: row.tenantId,
          actor: 'system',
          action: 'task_approval.expire',
          targetType: 'task_approval',
          targetId: row.id,
          outcome: 'expired',
          details: { task_id: row.taskId, role: row.role, expires_at: row.expiresAt.toISOString() },
        },
      });
    }
    return ended.length;
  });
}

/** The latest decision request of a task, or null. */
export function latestTaskApproval(context: Actor, taskId: string): Promise<TaskApproval | null> {
  return context.prisma.taskApproval.findFirst({
    where: { taskId, ...roleScope(context.viewer) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}
