import type { PrismaClient } from '../../db/client.js';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma } from '../../generated/prisma/client.js';
import { taskEventPayload } from './task-events.js';

/**
 * Delegation trees: a task's sub-tasks point at it (`parent_task_id`) and at their tree's root. Waking a
 * parent whose sub-tasks have ended, and what a tree has cost, live here, below the queue and delegation.
 */

/** Statuses a task does not leave. */
export const ENDED_STATUSES = ['completed', 'failed', 'cancelled'] as const;

/**
 * Puts a waiting task back in its role's queue when its sub-tasks have all ended, or one of them failed and
 * it asked to resume on the first failure; announced as TASK_UPDATED. The task is locked before its children
 * are counted, in a statement of its own: of two children ending together, the later call sees both ended,
 * so a parent is woken once, by whichever call comes last.
 */
async function wakeParent(tx: Prisma.TransactionClient, tenantId: string, parentId: string) {
  const [parent] = await tx.$queryRaw<{ status: string; resume_on: string | null }[]>`
    SELECT status::text, resume_on FROM tasks
    WHERE id = ${parentId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (parent?.status !== 'waiting') return;
  const [children] = await tx.$queryRaw<{ open: number; failed: number }[]>`
    SELECT count(*) FILTER (WHERE status NOT IN ('completed', 'failed', 'cancelled'))::int AS open,
      count(*) FILTER (WHERE status = 'failed')::int AS failed
    FROM tasks WHERE parent_task_id = ${parentId}::uuid`;
  if (!children) return;
  if (children.open > 0 && !(parent.resume_on === 'first_failure' && children.failed > 0)) return;
  const woken = await tx.task.update({ where: { id: parentId }, data: { status: 'pending' } });
  await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(woken) });
}

/** wakeParent for each parent, in `tx`, after the statement that ended the children. */
export async function wakeParentsIn(
  tx: Prisma.TransactionClient,
  tenantId: string,
  parentIds: readonly (string | null)[],
): Promise<void> {
  for (const parentId of new Set(parentIds)) if (parentId !== null) await wakeParent(tx, tenantId, parentId);
}

/** wakeParent for each parent, each in a transaction of its own, once the children's ends committed. */
export async function wakeParents(
  prisma: PrismaClient,
  tenantId: string,
  parentIds: readonly (string | null)[],
): Promise<void> {
  for (const parentId of new Set(parentIds)) {
    if (parentId !== null) await prisma.$transaction((tx) => wakeParent(tx, tenantId, parentId));
  }
}

/**
 * Waiting tasks whose wake was lost (the gateway stopped between a child's end and its parent's wake): the
 * lease sweep wakes them. Returns how many it looked at.
 */
export async function wakeStrandedParents(prisma: PrismaClient): Promise<number> {
  const stranded = await prisma.$queryRaw<{ id: string; tenant_id: string }[]>`
    SELECT p.id::text, p.tenant_id::text FROM tasks p
    WHERE p.status = 'waiting' AND NOT EXISTS (
      SELECT 1 FROM tasks c WHERE c.parent_task_id = p.id AND c.status NOT IN ('completed', 'failed', 'cancelled'))
    LIMIT 100`;
  for (const parent of stranded) await wakeParents(prisma, parent.tenant_id, [parent.id]);
  return stranded.length;
}

/** A task and everything delegated under it, any depth: ids and their cost, as a recursive CTE `tree`. */
export const treeOf = (taskId: string) => Prisma.sql`
  WITH RECURSIVE tree AS (
    SELECT id, cost_usd, tokens_used FROM tasks WHERE id = ${taskId}::uuid
    UNION ALL
    SELECT t.id, t.cost_usd, t.tokens_used FROM tasks t JOIN tree ON t.parent_task_id = tree.id
  )`;

export interface TreeCost {
  costUsd: Prisma.Decimal;
  tokensUsed: bigint;
}

/** What a task and all its sub-tasks (any depth) have cost so far. */
export async function treeCost(db: Prisma.TransactionClient, taskId: string): Promise<TreeCost> {
  const [row] = await db.$queryRaw<{ cost: Prisma.Decimal; tokens: bigint }[]>`
    ${treeOf(taskId)}
    SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens_used), 0)::bigint AS tokens FROM tree`;
  return { costUsd: row?.cost ?? new Prisma.Decimal(0), tokensUsed: row?.tokens ?? 0n };
}

/** What a thread's tasks and everything they delegated have cost so far. */
export async function threadCost(db: Prisma.TransactionClient, threadId: string): Promise<TreeCost> {
  const [row] = await db.$queryRaw<{ cost: Prisma.Decimal; tokens: bigint }[]>`
    WITH RECURSIVE tree AS (
      SELECT id, cost_usd, tokens_used FROM tasks WHERE thread_id = ${threadId}::uuid
      UNION ALL
      SELECT t.id, t.cost_usd, t.tokens_used FROM tasks t JOIN tree ON t.parent_task_id = tree.id
    )
    SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens_used), 0)::bigint AS tokens FROM tree`;
  return { costUsd: row?.cost ?? new Prisma.Decimal(0), tokensUsed: row?.tokens ?? 0n };
}
