import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma, type Task } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { forbidden, notFound, Refusal } from '../errors.js';
import { tripOnDelegationCycle } from './breakers.js';
import { readBudgets, releaseReservations, remainingUsd } from './budgets.js';
import type { TokenUsage } from './completion-rules.js';
import { delegationPath, delegationTargets, type OrgChart, readOrgChart } from './org-chart.js';
import { endRunningTask, lockOwnRunningTask, usageAdded } from './queue.js';
import { roleScopeSql } from './role-binding.js';
import { normalizeRole } from './roles.js';
import { type TaskEventSource, taskEventPayload } from './task-events.js';
import { chargeStep, recordSteps } from './task-steps.js';
import { ENDED_STATUSES, treeOf, wakeParentsIn } from './task-tree.js';

/** How far below its root a task may be: a root's children are at depth 1. */
export const MAX_DELEGATION_DEPTH = 5;
/** Sub-tasks one delegation queues at most. */
export const MAX_DELEGATIONS = 10;

/** When a waiting task returns to its role's queue. */
export type ResumeOn = 'all_ended' | 'first_failure';
export const RESUME_ON: readonly ResumeOn[] = ['all_ended', 'first_failure'];

export interface DelegationDraft {
  role: string;
  message: string;
  /** The most the sub-task's work may cost, USD; null: no cap of its own. */
  costCapUsd?: number | null | undefined;
}

export interface DelegationCommand {
  delegations: readonly DelegationDraft[];
  resumeOn: ResumeOn;
  /** What the delegating attempt has used so far; charged to its budgets now, added to the task. */
  tokensUsed: number;
  costUsd: number;
  usage?: TokenUsage | null | undefined;
}

export interface Delegation {
  parent: Task;
  children: Task[];
}

/** A delegation refused by the chart, the chain, the depth or the room left: 422 with the reason. */
const refused = (
  index: number,
  field: 'role' | 'costCapUsd',
  reason: string,
  message: string,
  facts: Record<string, unknown>,
) =>
  new Refusal('BAD_USER_INPUT', message, {
    reason,
    facts: {
      ...facts,
      detail: [{ type: reason, loc: ['input', 'delegations', index, field], msg: message, input: null }],
    },
  });

interface ParentRow {
  role: string;
  depth: number;
  role_chain: string[];
  root_task_id: string | null;
  cost_cap_usd: string | null;
}

/**
 * The room the delegating task leaves for its sub-tasks' caps, USD: what its role's and the tenant's budgets
 * have left (counting its own reservation, which the delegation gives back, and what it reports now), and,
 * when it has a cap, that cap less what its tree has cost and the caps its unfinished children hold. Null
 * when nothing bounds it.
 */
async function roomOf(
  tx: Prisma.TransactionClient,
  tenantId: string,
  taskId: string,
  parent: ParentRow,
  reportedUsd: Prisma.Decimal,
): Promise<Prisma.Decimal | null> {
  const rooms: Prisma.Decimal[] = [];
  const budgets = (await readBudgets(tx, tenantId)).filter(
    (budget) => budget.role === null || budget.role === parent.role,
  );
  if (budgets.length > 0) {
    const held = await tx.$queryRaw<{ budget_id: string; amount_usd: Prisma.Decimal }[]>`
      SELECT budget_id::text, amount_usd FROM budget_reservations WHERE task_id = ${taskId}::uuid`;
    for (const budget of budgets) {
      const own = held.find((row) => row.budget_id === budget.id)?.amount_usd ?? new Prisma.Decimal(0);
      rooms.push(Prisma.Decimal.max(0, remainingUsd(budget).plus(own).minus(reportedUsd)));
    }
  }
  if (parent.cost_cap_usd !== null) {
    const [spent] = await tx.$queryRaw<{ tree: Prisma.Decimal; promised: Prisma.Decimal }[]>`
      SELECT
        (${treeOf(taskId)} SELECT coalesce(sum(cost_usd), 0) FROM tree) AS tree,
        (SELECT coalesce(sum(cost_cap_usd), 0) FROM tasks
          WHERE parent_task_id = ${taskId}::uuid AND status NOT IN ('completed', 'failed', 'cancelled')) AS promised`;
    const left = new Prisma.Decimal(parent.cost_cap_usd)
      .minus(spent?.tree ?? 0)
      .minus(spent?.promised ?? 0)
      .minus(reportedUsd);
    rooms.push(Prisma.Decimal.max(0, left));
  }
  return rooms.length === 0 ? null : Prisma.Decimal.min(...rooms);
}

/** Checks each sub-task against the chart, the chain and the depth limit; the first refusal is thrown. */
function checkAlongChart(chart: OrgChart, parent: ParentRow, drafts: readonly DelegationDraft[]) {
  const chain = [...parent.role_chain, parent.role];
  drafts.forEach((draft, index) => {
    const role = normalizeRole(draft.role);
    if (!chart.has(role)) {
      throw refused(index, 'role', 'unknown_role', `Unknown agent role '${role}'`, { role });
    }
    if (chain.includes(role)) {
      throw refused(
        index,
        'role',
        'delegation_cycle',
        `'${role}' is already in this task's chain (${[...chain, role].join(' → ')}): it cannot be asked again`,
        { chain: [...chain, role] },
      );
    }
    if (delegationPath(chart, parent.role, role) === null) {
      const targets = delegationTargets(chart, parent.role);
      throw refused(
        index,
        'role',
        'not_along_org_chart',
        `'${parent.role}' cannot delegate to '${role}': work goes down the org chart` +
          (chart.get(parent.role)?.delegatesAcross ? ' or across to roles with the same manager' : '') +
          ` (${targets.length > 0 ? targets.join(', ') : 'no role reports to it'})`,
        { from: parent.role, to: role, targets },
      );
    }
    if (parent.depth + 1 > MAX_DELEGATION_DEPTH) {
      throw refused(
        index,
        'role',
        'depth_limit',
        `A sub-task may be at most ${MAX_DELEGATION_DEPTH} levels below its root task; this one would be at ${parent.depth + 1}`,
        { depth: parent.depth + 1, maxDepth: MAX_DELEGATION_DEPTH },
      );
    }
  });
}

/**
 * Hands parts of the caller's running task to other roles: one pending sub-task per draft, queued for its
 * role, and the task itself waits (`waiting`, no lease, no claimer, its reservation given back and what it
 * reports charged; the attempt is not counted) until its sub-tasks have ended, or one failed when
 * `resumeOn` is `first_failure`: then it is pending again for its role, its sub-tasks' outputs readable as
 * its `children`. Refused, and nothing written, when the task is not the caller's running one (404, 409,
 * 403 as for completeTask), or a draft goes against the rules: its role unknown, already in the task's chain
 * (a cycle: the refusal carries the chain), not below the task's role in the org chart (nor across, where
 * allowed), deeper than MAX_DELEGATION_DEPTH, or caps that together pass the room the task leaves. A
 * cycle trips the delegating role's breaker (breakers.ts), after the refused transaction.
 */
export async function delegateTask(context: Actor, parentId: string, command: DelegationCommand) {
  try {
    return await delegateInTransaction(context, parentId, command);
  } catch (error) {
    if (error instanceof Refusal && error.reason === 'delegation_cycle') {
      const chain = (error.facts().chain ?? []) as string[];
      await tripOnDelegationCycle(context, {
        tenantId: context.viewer.tenantId,
        // The chain ends with the role asked again; the one before it is the delegating task's.
        role: chain.at(-2) ?? '',
        chain,
        taskId: parentId,
      });
    }
    throw error;
  }
}

async function delegateInTransaction(context: Actor, parentId: string, command: DelegationCommand) {
  const { tenantId, sub } = context.viewer;
  const reportedUsd = new Prisma.Decimal(command.costUsd.toFixed(6));
  const charged = await chargeStep(context, parentId, 'delegated', command);
  const delegation = await context.prisma.$transaction(async (tx) => {
    await lockOwnRunningTask(tx, context, parentId);
    const [parent] = await tx.$queryRaw<ParentRow[]>`
      SELECT role, depth, role_chain, root_task_id::text, cost_cap_usd::text FROM tasks WHERE id = ${parentId}::uuid`;
    if (!parent) throw new Error(`task ${parentId} vanished while locked`);
    const chart = await readOrgChart(tx, tenantId);
    checkAlongChart(chart, parent, command.delegations);
    const caps = command.delegations.map((draft) =>
      draft.costCapUsd === null || draft.costCapUsd === undefined
        ? null
        : new Prisma.Decimal(draft.costCapUsd.toFixed(6)),
    );
    const room = await roomOf(tx, tenantId, parentId, parent, reportedUsd);
    if (room !== null) {
      let promised = new Prisma.Decimal(0);
      for (const [index, cap] of caps.entries()) {
        if (cap === null) continue;
        promised = promised.plus(cap);
        if (promised.greaterThan(room)) {
          throw refused(
            index,
            'costCapUsd',
            'cap_exceeds_room',
            `The sub-tasks' caps come to $${promised.toFixed(6)} by this one, more than the $${room.toFixed(6)} the task's budgets and cap leave`,
            { roomUsd: room.toNumber(), requestedUsd: promised.toNumber() },
          );
        }
      }
    }
    const rootId = parent.root_task_id ?? parentId;
    const chain = [...parent.role_chain, parent.role];
    const children: Task[] = [];
    for (const [index, draft] of command.delegations.entries()) {
      const child = await tx.task.create({
        data: {
          tenantId,
          role: normalizeRole(draft.role),
          message: draft.message,
          createdBy: sub,
          parentTaskId: parentId,
          rootTaskId: rootId,
          depth: parent.depth + 1,
          roleChain: chain,
          costCapUsd: caps[index] ?? null,
        },
      });
      await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(child) });
      children.push(child);
    }
    const waiting = await endRunningTask(
      tx,
      context,
      parentId,
      Prisma.sql`
        status = 'waiting', resume_on = ${command.resumeOn}, claimed_by = NULL,
        attempts = GREATEST(attempts - 1, 0), ${usageAdded(command)}`,
      { costUsd: reportedUsd, tokens: BigInt(command.tokensUsed) },
      {
        ends: false,
        // One step per sub-task; the first carries the charge (chargeStep), the others none.
        steps: children.map((child, index) =>
          index === 0
            ? { ...charged, child_task_id: child.id }
            : { kind: 'delegated', actor: sub, child_task_id: child.id, tokens: 0 },
        ),
      },
    );
    await recordAudit(tx, context, {
      action: 'task.delegate',
      targetType: 'task',
      targetId: parentId,
      outcome: 'delegated',
      details: {
        children: children.map((child) => ({
          id: child.id,
          role: child.role,
          cost_cap_usd: child.costCapUsd,
        })),
        resume_on: command.resumeOn,
      },
    });
    return { parent: waiting, children };
  });
  return delegation satisfies Delegation;
}

type CancelledRow = TaskEventSource & { previous: string };

/**
 * Cancels a task of the caller's tenant that has not ended, and every sub-task under it that has not ended
 * (any depth): `cancelled`, finished now, no lease; what running ones reserved is given back. An agent
 * still working one of them is refused when it reports (409). The chairman or an operator may cancel any
 * task; anyone else only a task they queued or delegated (403). 404 for a task the caller cannot see, 409
 * for one that already ended; a refusal changes nothing. Audited once with the cascade; each task is
 * announced as TASK_UPDATED, and a parent waiting for the cancelled task may be woken.
 */
export async function cancelTask(context: Actor, id: string, reason: string | null): Promise<Task> {
  const { tenantId, sub, roles } = context.viewer;
  const manager = roles.includes('chairman') || roles.includes('operator');
  const cancelled = await context.prisma.$transaction(async (tx) => {
    const [task] = await tx.$queryRaw<
      { status: string; created_by: string; parent_task_id: string | null }[]
    >`
      SELECT status::text, created_by, parent_task_id::text FROM tasks
      WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid ${roleScopeSql(context.viewer)}
      FOR UPDATE`;
    if (!task) throw notFound(`Task ${id} not found`);
    if (!manager && task.created_by !== sub) {
      throw forbidden('Only the chairman, an operator or whoever queued a task may cancel it');
    }
    if ((ENDED_STATUSES as readonly string[]).includes(task.status)) {
      throw new Refusal('CONFLICT', `Task ${id} is ${task.status}: it has already ended`, {
        reason: 'task_ended',
        facts: { status: task.status },
      });
    }
    const rows = await tx.$queryRaw<CancelledRow[]>`
      ${treeOf(id)}
      , ended AS (
        SELECT t.id, t.status::text AS previous FROM tasks t JOIN tree ON t.id = tree.id
        WHERE t.status NOT IN ('completed', 'failed', 'cancelled')
        ORDER BY t.id
        FOR UPDATE OF t
      )
      UPDATE tasks t SET status = 'cancelled', finished_at = coalesce(t.finished_at, now()), lease_expires_at = NULL,
        error = ${`cancelled by ${sub}${reason ? `: ${reason}` : ''}`}, updated_at = now()
      FROM ended e WHERE t.id = e.id
      RETURNING t.id::text, t.role, t.status::text, t.attempts, t.updated_at AS "updatedAt", e.previous,
        t.parent_task_id::text AS "parentTaskId", t.root_task_id::text AS "rootTaskId"`;
    const running = rows.filter((row) => row.previous === 'running');
    // A review still open ends with its task; a task in review keeps its finish (its charge's time).
    await tx.$executeRaw`
      UPDATE task_reviews SET status = 'cancelled', decided_by = ${sub}, decided_at = now(), note = ${reason}
      WHERE task_id = ANY(${rows.filter((row) => row.previous === 'in_review').map((row) => row.id)}::uuid[])
        AND status = 'pending'`;
    for (const role of new Set(running.map((row) => row.role))) {
      await releaseReservations(
        tx,
        tenantId,
        role,
        running.filter((row) => row.role === role).map((row) => row.id),
      );
    }
    for (const row of rows) {
      await recordSteps(tx, tenantId, row.id, [
        { kind: 'cancelled', actor: sub, reason, outcome: row.previous },
      ]);
      await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(row) });
    }
    await recordAudit(tx, context, {
      action: 'task.cancel',
      targetType: 'task',
      targetId: id,
      outcome: 'cancelled',
      details: { reason, cascaded: rows.filter((row) => row.id !== id).map((row) => row.id) },
    });
    await wakeParentsIn(tx, tenantId, [task.parent_task_id]);
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
  return cancelled;
}
