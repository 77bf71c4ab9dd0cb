import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Actor } from '../actor.js';
import { C_SUITE_ROLES, isCSuiteRole, normalizeRole } from '../agents/roles.js';
import { badRequest, conflict } from '../errors.js';

export interface PauseCommand {
  role: string;
  actorUserId: string;
  reason?: string | null | undefined;
}

export interface PauseState {
  role: string;
  paused: boolean;
  /** When the pause (or, for a resume, the resume) was recorded. */
  at: Date;
  eventId: string;
}

async function checkPreconditions(context: Actor, rawRole: string): Promise<string> {
  const role = normalizeRole(rawRole);
  if (!isCSuiteRole(role)) {
    throw badRequest(
      `Unknown role '${rawRole}': only the C-suite roles ${C_SUITE_ROLES.join(', ')} can be paused or resumed`,
    );
  }
  const tenant = await context.prisma.tenant.findUniqueOrThrow({ where: { id: context.viewer.tenantId } });
  if (!tenant.dogfoodLiveMode) throw badRequest('Tenant is not in dogfood live mode');
  return role;
}

interface RoleRow {
  id: string;
  paused: boolean;
  paused_at: Date | null;
  pause_event_id: string | null;
  resumed_at: Date | null;
  resume_event_id: string | null;
}

interface Transition {
  action: 'agent.pause' | 'agent.resume';
  eventType: 'DOGFOOD_AGENT_PAUSED' | 'DOGFOOD_AGENT_RESUMED';
  paused: boolean;
  outcome: string;
  repeatOutcome: string;
  /** The event time's name in the payload. */
  timeKey: 'paused_at' | 'resumed_at';
  /** The earlier transition to answer a repeat with, or null when a repeat is not possible. */
  previous(row: RoleRow, role: string): { at: Date; eventId: string } | null;
  update(at: Date, actor: string, eventId: string): Record<string, unknown>;
}

const pausing: Transition = {
  action: 'agent.pause',
  eventType: 'DOGFOOD_AGENT_PAUSED',
  paused: true,
  outcome: 'paused',
  repeatOutcome: 'already_paused',
  timeKey: 'paused_at',
  previous: (row) =>
    row.paused && row.paused_at && row.pause_event_id
      ? { at: row.paused_at, eventId: row.pause_event_id }
      : null,
  update: (at, actor, eventId) => ({ paused: true, pausedAt: at, pausedBy: actor, pauseEventId: eventId }),
};

const resuming: Transition = {
  action: 'agent.resume',
  eventType: 'DOGFOOD_AGENT_RESUMED',
  paused: false,
  outcome: 'resumed',
  repeatOutcome: 'not_paused',
  timeKey: 'resumed_at',
  previous(row, role) {
    if (row.paused) return null;
    if (!row.resumed_at || !row.resume_event_id) throw conflict(`Agent role '${role}' is not paused`);
    return { at: row.resumed_at, eventId: row.resume_event_id };
  },
  update: (at, actor, eventId) => ({
    paused: false,
    resumedAt: at,
    resumedBy: actor,
    resumeEventId: eventId,
  }),
};

/**
 * Moves a C-suite agent into the transition's state. State, audit row and outbox event commit together; a
 * repeat answers with the earlier transition and emits nothing.
 */
async function transition(context: Actor, command: PauseCommand, change: Transition): Promise<PauseState> {
  const role = await checkPreconditions(context, command.role);
  const { tenantId } = context.viewer;
  const state = await context.prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<RoleRow[]>`
      SELECT id::text, paused, paused_at, pause_event_id::text, resumed_at, resume_event_id::text
      FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR UPDATE`;
    if (!row) throw new Error(`built-in role ${role} missing for tenant ${tenantId}`);
    const audit = {
      action: change.action,
      targetType: 'agent_role',
      targetId: role,
      actor: command.actorUserId,
    };
    const earlier = change.previous(row, role);
    if (earlier) {
      await recordAudit(tx, context, {
        ...audit,
        outcome: change.repeatOutcome,
        details: { reason: command.reason ?? null },
      });
      return { role, paused: change.paused, ...earlier, fresh: false };
    }
    const at = new Date();
    const eventId = randomUUID();
    await tx.agentRole.update({
      where: { id: row.id },
      data: change.update(at, command.actorUserId, eventId),
    });
    await recordAudit(tx, context, {
      ...audit,
      outcome: change.outcome,
      details: { reason: command.reason ?? null, event_id: eventId },
    });
    await enqueueEvent(tx, {
      eventId,
      type: change.eventType,
      tenantId,
      payload: { role, actor_user_id: command.actorUserId, [change.timeKey]: at.toISOString() },
    });
    return { role, paused: change.paused, at, eventId, fresh: true };
  });
  return { role: state.role, paused: state.paused, at: state.at, eventId: state.eventId };
}

/** Pauses a C-suite agent; a repeat answers with the original pause. */
export const pauseAgent = (context: Actor, command: PauseCommand) => transition(context, command, pausing);

/** Resumes a paused C-suite agent; a repeat answers with the last resume, a never-paused role is 409. */
export const resumeAgent = (context: Actor, command: PauseCommand) => transition(context, command, resuming);
