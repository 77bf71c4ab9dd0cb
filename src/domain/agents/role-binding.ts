import type { Viewer } from '../../auth/viewer.js';
import type { EventType } from '../../events/topics.js';
import { Prisma } from '../../generated/prisma/client.js';
import { Refusal } from '../errors.js';

/**
 * An agent token may be bound to the agent roles it works for (its `agent_roles` claim, src/auth/tokens.ts).
 * A caller so bound claims, ends, reads and hears of the tasks of those roles only, on every face: the
 * claims and task mutations (queue.ts, task-approvals.ts) and every read of tasks, threads, decision requests
 * and task events ask here, with the viewer every face hands the domain. A caller without the claim works
 * every role of its tenant. A role the tenant does not have simply matches no task.
 */
export function worksFor(viewer: Viewer, role: string): boolean {
  return viewer.agentRoles === undefined || viewer.agentRoles.includes(role);
}

/** Refuses (403, `role_not_bound`) a claim of a role the caller's token is not bound to. Changes nothing. */
export function requireWorksFor(viewer: Viewer, role: string): void {
  if (worksFor(viewer, role)) return;
  throw new Refusal(
    'FORBIDDEN',
    `This agent token works only for the roles ${viewer.agentRoles?.join(', ')}, not ${role}`,
    { reason: 'role_not_bound', facts: { agentRoles: viewer.agentRoles } },
  );
}

/**
 * The rows the caller may read, as a Prisma `where` for tasks, threads and decision requests: its tenant's,
 * of its roles when its token is bound, and of `role` alone when one is asked for (none when the caller does
 * not work for it). Every read of those rows starts from it.
 */
export function roleScope(
  viewer: Viewer,
  role?: string | null,
): { tenantId: string; role?: string | { in: string[] } } {
  const { tenantId, agentRoles } = viewer;
  if (role) return { tenantId, role: worksFor(viewer, role) ? role : { in: [] } };
  return agentRoles === undefined ? { tenantId } : { tenantId, role: { in: [...agentRoles] } };
}

/** roleScope's role condition for raw SQL (`AND <column> = ANY(…)`), empty for a caller without a binding. */
export function roleScopeSql(viewer: Viewer, column = 'role'): Prisma.Sql {
  if (viewer.agentRoles === undefined) return Prisma.empty;
  return Prisma.sql`AND ${Prisma.raw(column)} = ANY(${[...viewer.agentRoles]}::text[])`;
}

/** The events that announce a task of a role (their payload's `role`). */
const TASK_EVENT_TYPES: readonly EventType[] = [
  'TASK_UPDATED',
  'TASK_STEPS_RECORDED',
  'TASK_APPROVAL_REQUESTED',
  'TASK_APPROVAL_DECIDED',
];

/** Whether the caller hears of an event: a task event only when it works for the task's role. */
export function hearsOf(
  viewer: Viewer,
  event: { type: EventType; payload: Record<string, unknown> },
): boolean {
  if (viewer.agentRoles === undefined || !TASK_EVENT_TYPES.includes(event.type)) return true;
  return typeof event.payload.role === 'string' && viewer.agentRoles.includes(event.payload.role);
}
