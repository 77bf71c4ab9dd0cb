import { recordAudit } from '../../audit.js';
import { Prisma, type Routine } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { normalizeRole } from '../agents/roles.js';
import { notFound } from '../errors.js';
import { type CatchUp, nextOccurrence, parseSchedule, scheduleRefusal } from './schedule.js';

export interface RoutineDraft {
  role: string;
  cron: string;
  timeZone: string;
  message: string;
  /** USD each queued task may cost at most; null or omitted: no cap. */
  costCapUsd?: number | null | undefined;
  catchUp: CatchUp;
  enabled: boolean;
}

/** A change to a routine: what is omitted is kept; `costCapUsd: null` removes the cap. */
export type RoutineChange = { [Key in keyof RoutineDraft]?: RoutineDraft[Key] | undefined } & {
  costCapUsd?: number | null | undefined;
};

const capOf = (usd: number | null | undefined) =>
  usd === null || usd === undefined ? null : new Prisma.Decimal(usd.toFixed(6));

/** Locks the tenant's role (so it stays while the routine is written); refuses an unknown one. */
async function requireRole(tx: Prisma.TransactionClient, tenantId: string, rawRole: string) {
  const role = normalizeRole(rawRole);
  const [found] = await tx.$queryRaw<{ role: string }[]>`
    SELECT role FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR SHARE`;
  if (!found) throw scheduleRefusal('role', 'unknown_role', `Unknown agent role '${role}'`, rawRole);
  return found.role;
}

/** What an audit row tells of a routine. */
const auditFacts = (routine: Routine) => ({
  role: routine.role,
  cron: routine.cron,
  time_zone: routine.timeZone,
  cost_cap_usd: routine.costCapUsd?.toFixed() ?? null,
  catch_up: routine.catchUp,
  enabled: routine.enabled,
});

/**
 * Adds a routine to the caller's tenant; its first occurrence is the schedule's first after now. Refused as
 * BAD_USER_INPUT with a reason, and nothing written, for an unknown role (`unknown_role`) or schedule
 * (parseSchedule). Audited as `routine.create`.
 */
export async function createRoutine(context: Actor, draft: RoutineDraft, now = new Date()): Promise<Routine> {
  const { tenantId, sub } = context.viewer;
  const schedule = parseSchedule(draft.cron, draft.timeZone);
  const next = nextOccurrence(schedule, now);
  if (!next) throw scheduleRefusal('cron', 'cron_invalid', `'${draft.cron}' never fires again`, draft.cron);
  return context.prisma.$transaction(async (tx) => {
    const role = await requireRole(tx, tenantId, draft.role);
    const routine = await tx.routine.create({
      data: {
        tenantId,
        role,
        cron: draft.cron.trim(),
        timeZone: draft.timeZone,
        message: draft.message,
        costCapUsd: capOf(draft.costCapUsd),
        catchUp: draft.catchUp,
        enabled: draft.enabled,
        nextRunAt: next,
        createdBy: sub,
      },
    });
    await recordAudit(tx, context, {
      action: 'routine.create',
      targetType: 'routine',
      targetId: routine.id,
      outcome: 'created',
      details: auditFacts(routine),
    });
    return routine;
  });
}

async function lockRoutine(tx: Prisma.TransactionClient, tenantId: string, id: string) {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM routines WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (!row) throw notFound(`Routine ${id} not found`);
  return tx.routine.findUniqueOrThrow({ where: { id } });
}

/**
 * Changes a routine of the caller's tenant (NOT_FOUND for any other id). A new schedule or time zone, or
 * enabling it again, starts it over from now: occurrences passed while it was disabled are not missed ones.
 * Refused as createRoutine refuses. Audited as `routine.update` with the routine before and after.
 */
export async function updateRoutine(
  context: Actor,
  id: string,
  change: RoutineChange,
  now = new Date(),
): Promise<Routine> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const before = await lockRoutine(tx, tenantId, id);
    const cron = change.cron?.trim() ?? before.cron;
    const timeZone = change.timeZone ?? before.timeZone;
    const enabled = change.enabled ?? before.enabled;
    const schedule = parseSchedule(cron, timeZone);
    const restarts = cron !== before.cron || timeZone !== before.timeZone || (enabled && !before.enabled);
    let nextRunAt = before.nextRunAt;
    if (restarts) {
      const next = nextOccurrence(schedule, now);
      if (!next) throw scheduleRefusal('cron', 'cron_invalid', `'${cron}' never fires again`, cron);
      nextRunAt = next;
    }
    const role = change.role === undefined ? before.role : await requireRole(tx, tenantId, change.role);
    const after = await tx.routine.update({
      where: { id },
      data: {
        role,
        cron,
        timeZone,
        enabled,
        nextRunAt,
        ...(change.message === undefined ? {} : { message: change.message }),
        ...(change.costCapUsd === undefined ? {} : { costCapUsd: capOf(change.costCapUsd) }),
        ...(change.catchUp === undefined ? {} : { catchUp: change.catchUp }),
      },
    });
    await recordAudit(tx, context, {
      action: 'routine.update',
      targetType: 'routine',
      targetId: id,
      outcome: 'updated',
      details: { before: auditFacts(before), after: auditFacts(after) },
    });
    return after;
  });
}

/**
 * Deletes a routine of the caller's tenant with its occurrences; the tasks it queued stay (their
 * `routineId` becomes null). NOT_FOUND for any other id. Audited as `routine.delete`.
 */
export async function deleteRoutine(context: Actor, id: string): Promise<Routine> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const routine = await lockRoutine(tx, tenantId, id);
    await tx.routine.delete({ where: { id } });
    await recordAudit(tx, context, {
      action: 'routine.delete',
      targetType: 'routine',
      targetId: id,
      outcome: 'deleted',
      details: auditFacts(routine),
    });
    return routine;
  });
}
