import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import type { Context } from '../../context.js';
import { badRequest, conflict } from '../../errors.js';
import { enqueueEvent } from '../../events/outbox.js';
import { C_SUITE_ROLES, isCSuiteRole, normalizeRole } from '../agents/roles.js';

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

type AuthedContext = Context & { viewer: NonNullable<Context['viewer']> };

async function checkPreconditions(context: AuthedContext, rawRole: string): Promise<string> {
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

/**
 * Pauses a C-suite agent. State, audit row and outbox event commit together; a repeat answers with the
 * original pause and emits nothing.
 */
export async function pauseAgent(context: AuthedContext, command: PauseCommand): Promise<PauseState> {
  const role = await checkPreconditions(context, command.role);
  const { tenantId } = context.viewer;
  const state = await context.prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<RoleRow[]>`
      SELECT id::text, paused, paused_at, pause_event_id::text, resumed_at, resume_event_id::text
      FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR UPDATE`;
    if (!row) throw new Error(`built-in role ${role} missing for tenant ${tenantId}`);
    const audit = {
      action: 'agent.pause',
      targetType: 'agent_role',
      targetId: role,
      actor: command.actorUserId,
    };
    if (row.paused && row.paused_at && row.pause_event_id) {
      await recordAudit(tx, context, {
        ...audit,
        outcome: 'already_paused',
        details: { reason: command.reason ?? null },
      });
      return { role, paused: true, at: row.paused_at, eventId: row.pause_event_id, fresh: false };
    }
    const at = new Date();
    const eventId = randomUUID();
    await tx.agentRole.update({
      where: { id: row.id },
      data: { paused: true, pausedAt: at, pausedBy: command.actorUserId, pauseEventId: eventId },
    });
    await recordAudit(tx, context, {
      ...audit,
      outcome: 'paused',
      details: { reason: command.reason ?? null, event_id: eventId },
    });
    await enqueueEvent(tx, {
      eventId,
      type: 'DOGFOOD_AGENT_PAUSED',
      tenantId,
      payload: { role, actor_user_id: command.actorUserId, paused_at: at.toISOString() },
    });
    return { role, paused: true, at, eventId, fresh: true };
  });
  if (state.fresh) void context.services.relay.kick();
  return { role: state.role, paused: state.paused, at: state.at, eventId: state.eventId };
}

/**
 * Resumes a paused C-suite agent, the mirror of pauseAgent. A repeat answers with the last resume; a role
 * that was never paused is a conflict.
 */
export async function resumeAgent(context: AuthedContext, command: PauseCommand): Promise<PauseState> {
  const role = await checkPreconditions(context, command.role);
  const { tenantId } = context.viewer;
  const state = await context.prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<RoleRow[]>`
      SELECT id::text, paused, paused_at, pause_event_id::text, resumed_at, resume_event_id::text
      FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR UPDATE`;
    if (!row) throw new Error(`built-in role ${role} missing for tenant ${tenantId}`);
    const audit = {
      action: 'agent.resume',
      targetType: 'agent_role',
      targetId: role,
      actor: command.actorUserId,
    };
    if (!row.paused) {
      if (!row.resumed_at || !row.resume_event_id) throw conflict(`Agent role '${role}' is not paused`);
      await recordAudit(tx, context, {
        ...audit,
        outcome: 'not_paused',
        details: { reason: command.reason ?? null },
      });
      return { role, paused: false, at: row.resumed_at, eventId: row.resume_event_id, fresh: false };
    }
    const at = new Date();
    const eventId = randomUUID();
    await tx.agentRole.update({
      where: { id: row.id },
      data: { paused: false, resumedAt: at, resumedBy: command.actorUserId, resumeEventId: eventId },
    });
    await recordAudit(tx, context, {
      ...audit,
      outcome: 'resumed',
      details: { reason: command.reason ?? null, event_id: eventId },
    });
    await enqueueEvent(tx, {
      eventId,
      type: 'DOGFOOD_AGENT_RESUMED',
      tenantId,
      payload: { role, actor_user_id: command.actorUserId, resumed_at: at.toISOString() },
    });
    return { role, paused: false, at, eventId, fresh: true };
  });
  if (state.fresh) void context.services.relay.kick();
  return { role: state.role, paused: state.paused, at: state.at, eventId: state.eventId };
}
