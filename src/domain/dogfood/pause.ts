import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { C_SUITE_ROLES, isCSuiteRole, normalizeRole } from '../agents/roles.js';
import { badRequest, conflict, Refusal } from '../errors.js';

export interface PauseCommand {
  role: string;
  actorUserId: string;
  reason?: string | null | undefined;
}

/** Which roles a face may pause or resume. */
export interface PauseOptions {
  /**
   * Only the 8 C-suite roles, as the specification's pause route (REST) has them. Default false: any role
   * of the tenant, built in or registered.
   */
  cSuiteOnly?: boolean | undefined;
}

export interface PauseState {
  role: string;
  paused: boolean;
  /** When the pause (or, for a resume, the resume) was recorded. */
  at: Date;
  eventId: string;
}

/** The breaker behind a pause: what the audit entry and the event carry besides the pause itself. */
export interface BreakerPause {
  kind: string;
  /** Unique per role and kind: the same incident trips once, on whichever instance sees it first. */
  incidentKey: string;
  /** Figures and task ids; no text a client wrote. */
  evidence: Record<string, unknown>;
  /** One line for people: kept as the pause's reason. */
  summary: string;
}

/** What a trip answers: the trip, and the pause it made (null when the incident had already tripped). */
export interface BreakerTripResult {
  tripId: string;
  pause: PauseState;
}

/** The 400 of a role the tenant does not have, with the reason a client can test. */
const unknownRole = (rawRole: string) =>
  new Refusal('BAD_REQUEST', `Unknown agent role '${normalizeRole(rawRole)}': the tenant has no such role`, {
    reason: 'unknown_role',
  });

interface RoleRow {
  id: string;
  paused: boolean;
  paused_at: Date | null;
  paused_by: string | null;
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
  update(at: Date, command: PauseCommand, eventId: string): Prisma.AgentRoleUpdateInput;
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
  update: (at, command, eventId) => ({
    paused: true,
    pausedAt: at,
    pausedBy: command.actorUserId,
    pauseEventId: eventId,
    pauseReason: command.reason ?? null,
  }),
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
  update: (at, command, eventId) => ({
    paused: false,
    resumedAt: at,
    resumedBy: command.actorUserId,
    resumeEventId: eventId,
    pauseReason: null,
  }),
};

/** The actor a breaker's pause is recorded with: `breaker:<kind>`. */
export const breakerActor = (kind: string) => `breaker:${kind}`;
const pausedByBreaker = (row: RoleRow) => row.paused && (row.paused_by ?? '').startsWith('breaker:');

interface Rules extends PauseOptions {
  /**
   * Whether the tenant must be in dogfood live mode. `unless_breaker`: not to resume a role a breaker
   * paused (a safety stop is lifted in one action). A breaker's own pause never needs it.
   */
  liveMode: 'required' | 'unless_breaker' | 'skipped';
  breaker?: BreakerPause;
}

/**
 * Moves an agent role into the transition's state. State, audit row and outbox event commit together; a
 * repeat answers with the earlier transition and emits nothing. A breaker's transition first records its
 * trip, in the same transaction: when the incident has tripped before (another instance), it writes
 * nothing and answers null.
 */
async function transition(
  context: Actor,
  command: PauseCommand,
  change: Transition,
  rules: Rules,
): Promise<(PauseState & { tripId: string | null }) | null> {
  const role = normalizeRole(command.role);
  if (rules.cSuiteOnly && !isCSuiteRole(role)) {
    throw badRequest(
      `Unknown role '${command.role}': only the C-suite roles ${C_SUITE_ROLES.join(', ')} can be paused or resumed`,
    );
  }
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<RoleRow[]>`
      SELECT id::text, paused, paused_at, paused_by, pause_event_id::text, resumed_at, resume_event_id::text
      FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR UPDATE`;
    if (!row) throw unknownRole(command.role);
    const needsLiveMode =
      rules.liveMode === 'required' || (rules.liveMode === 'unless_breaker' && !pausedByBreaker(row));
    if (needsLiveMode) {
      const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId } });
      if (!tenant.dogfoodLiveMode) throw badRequest('Tenant is not in dogfood live mode');
    }
    let breaker: Record<string, unknown> | null = null;
    let tripId: string | null = null;
    if (rules.breaker) {
      const [trip] = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO breaker_trips (id, tenant_id, role, kind, incident_key, evidence)
        VALUES (gen_random_uuid(), ${tenantId}::uuid, ${role}, ${rules.breaker.kind},
          ${rules.breaker.incidentKey}, ${JSON.stringify(rules.breaker.evidence)}::jsonb)
        ON CONFLICT (tenant_id, role, kind, incident_key) DO NOTHING
        RETURNING id::text`;
      if (!trip) return null;
      tripId = trip.id;
      breaker = { kind: rules.breaker.kind, trip_id: trip.id, evidence: rules.breaker.evidence };
      await tx.agentRole.update({ where: { id: row.id }, data: { lastBreakerTripId: trip.id } });
    }
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
        details: { reason: command.reason ?? null, ...(breaker ? { breaker } : {}) },
      });
      return { role, paused: change.paused, ...earlier, tripId };
    }
    const at = new Date();
    const eventId = randomUUID();
    await tx.agentRole.update({ where: { id: row.id }, data: change.update(at, command, eventId) });
    await recordAudit(tx, context, {
      ...audit,
      outcome: change.outcome,
      details: { reason: command.reason ?? null, event_id: eventId, ...(breaker ? { breaker } : {}) },
    });
    await enqueueEvent(tx, {
      eventId,
      type: change.eventType,
      tenantId,
      payload: {
        role,
        actor_user_id: command.actorUserId,
        [change.timeKey]: at.toISOString(),
        // The breaker and its evidence (figures and task ids) are published; a person's reason never is.
        ...(breaker ? { breaker } : {}),
      },
    });
    return { role, paused: change.paused, at, eventId, tripId };
  });
}

const stateOf = (state: PauseState | null): PauseState => {
  if (!state) throw new Error('a pause or resume without a breaker always answers');
  return { role: state.role, paused: state.paused, at: state.at, eventId: state.eventId };
};

/**
 * Pauses an agent role of the caller's tenant (only a C-suite role with `cSuiteOnly`); the tenant must be
 * in dogfood live mode. A repeat answers with the original pause.
 */
export const pauseAgent = async (context: Actor, command: PauseCommand, options: PauseOptions = {}) =>
  stateOf(await transition(context, command, pausing, { ...options, liveMode: 'required' }));

/**
 * Resumes a paused agent role; a repeat answers with the last resume, a never-paused role is 409. Live mode
 * is needed, except (without `cSuiteOnly`) to resume a role a breaker paused.
 */
export const resumeAgent = async (context: Actor, command: PauseCommand, options: PauseOptions = {}) =>
  stateOf(
    await transition(context, command, resuming, {
      ...options,
      liveMode: options.cSuiteOnly ? 'required' : 'unless_breaker',
    }),
  );

/**
 * A breaker's pause of `role`, through the same transition as a person's, with `breaker:<kind>` as the
 * actor and the evidence in the audit entry and the event; live mode is not needed (a safety stop always
 * works). The trip is recorded in the same transaction, once per incident: null when it tripped before.
 */
export async function pauseForBreaker(
  context: Actor,
  role: string,
  breaker: BreakerPause,
): Promise<BreakerTripResult | null> {
  const state = await transition(
    context,
    { role, actorUserId: breakerActor(breaker.kind), reason: breaker.summary },
    pausing,
    { liveMode: 'skipped', breaker },
  );
  if (!state?.tripId) return null;
  return { tripId: state.tripId, pause: stateOf(state) };
}
