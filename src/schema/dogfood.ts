import { z } from 'zod';
import { recordAudit } from '../audit.js';
import { type AuthedContext, builder } from '../builder.js';
import { normalizeRole } from '../domain/agents/roles.js';
import { type PauseState, pauseAgent, resumeAgent } from '../domain/dogfood/pause.js';
import { graphqlArg, zodField, zodInputType, zodSubscription } from './args.js';
import { afterArg, eventStream } from './event-stream.js';

export const TenantRef = builder.prismaObject('Tenant', {
  fields: (t) => ({
    id: t.exposeID('id'),
    dogfoodLiveMode: t.exposeBoolean('dogfoodLiveMode'),
  }),
});

builder.mutationField('setDogfoodLiveMode', (t) =>
  t.withAuth({ chairman: true }).field({
    type: TenantRef,
    description: 'Turns dogfood live mode on or off for the caller’s tenant (chairman only).',
    ...zodField(t, z.object({ enabled: z.boolean() }), async (_root, { enabled }, context) =>
      context.prisma.$transaction(async (tx) => {
        const tenant = await tx.tenant.update({
          where: { id: context.viewer.tenantId },
          data: { dogfoodLiveMode: enabled },
        });
        await recordAudit(tx, context, {
          action: 'tenant.dogfood_live_mode',
          targetType: 'tenant',
          targetId: tenant.id,
          outcome: enabled ? 'enabled' : 'disabled',
        });
        return tenant;
      }),
    ),
  }),
);

const pauseInput = z.object({
  actorUserId: graphqlArg(z.string().trim().min(1).max(200), {
    description: 'The CEO or chairman issuing the pause or resume.',
  }),
  reason: graphqlArg(z.string().max(2000).nullish(), {
    description: 'Kept in the audit log only; never published.',
  }),
});
zodInputType('PauseInput', pauseInput);

export const pauseArgs = z.object({
  role: z.string().min(1).max(64),
  input: pauseInput,
  cSuiteOnly: graphqlArg(z.boolean().nullish(), {
    description:
      'Only the 8 C-suite roles, as the REST pause and resume routes have it (400 for any other). Default false: any role of the tenant, registered roles too.',
  }),
});

const PauseResult = builder.objectRef<PauseState>('PauseResult').implement({
  fields: (t) => ({
    role: t.exposeString('role'),
    paused: t.exposeBoolean('paused'),
    pausedAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (state) => (state.paused ? state.at : null),
    }),
    resumedAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (state) => (state.paused ? null : state.at),
    }),
    eventId: t.exposeID('eventId', {
      description: 'Correlation id of the DOGFOOD_AGENT_PAUSED or _RESUMED event.',
    }),
  }),
});

builder.mutationField('pauseAgent', (t) =>
  t.withAuth({ chairman: true }).field({
    type: PauseResult,
    description:
      'Pauses an agent role of the tenant (chairman only; the tenant must be in dogfood live mode); BAD_REQUEST with reason unknown_role for a role the tenant does not have. Idempotent: a repeat answers with the original pause.',
    ...zodField(t, pauseArgs, (_root, { role, input, cSuiteOnly }, context) =>
      pauseAgent(context, { role, ...input }, { cSuiteOnly: cSuiteOnly ?? false }),
    ),
  }),
);

builder.mutationField('resumeAgent', (t) =>
  t.withAuth({ chairman: true }).field({
    type: PauseResult,
    description:
      'Resumes a paused agent role (chairman only). Needs dogfood live mode, except to resume a role a breaker paused (without cSuiteOnly). Idempotent: a repeat answers with the last resume.',
    ...zodField(t, pauseArgs, (_root, { role, input, cSuiteOnly }, context) =>
      resumeAgent(context, { role, ...input }, { cSuiteOnly: cSuiteOnly ?? false }),
    ),
  }),
);

export interface PausePayload {
  event_id: string;
  tenant_id: string;
  role: string;
  actor_user_id: string;
  paused_at?: string;
  resumed_at?: string;
  /** Set when a breaker paused the role. */
  breaker?: { kind: string; trip_id: string; evidence: Record<string, unknown> };
}

const BreakerNotice = builder
  .objectRef<NonNullable<PausePayload['breaker']>>('BreakerPauseNotice')
  .implement({
    description: 'The breaker that paused a role, with its evidence (figures and task ids).',
    fields: (t) => ({
      kind: t.exposeString('kind'),
      tripId: t.exposeID('trip_id'),
      evidence: t.expose('evidence', { type: 'JSON' }),
    }),
  });

export const AgentPausedEvent = builder.objectRef<PausePayload>('AgentPausedEvent').implement({
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    role: t.exposeString('role'),
    actorUserId: t.exposeString('actor_user_id', {
      description: 'Who paused: the actor_user_id given, or breaker:<kind> for a breaker.',
    }),
    pausedAt: t.field({ type: 'DateTime', resolve: (event) => event.paused_at ?? '' }),
    breaker: t.field({
      type: BreakerNotice,
      nullable: true,
      description: 'The breaker that paused the role; null for a person’s pause.',
      resolve: (event) => event.breaker ?? null,
    }),
  }),
});

export const AgentResumedEvent = builder.objectRef<PausePayload>('AgentResumedEvent').implement({
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    role: t.exposeString('role'),
    actorUserId: t.exposeString('actor_user_id'),
    resumedAt: t.field({ type: 'DateTime', resolve: (event) => event.resumed_at ?? '' }),
  }),
});

const pauseSubscriptionArgs = z.object({ role: z.string().max(64).nullish(), after: afterArg });

function pauseEvents(type: 'DOGFOOD_AGENT_PAUSED' | 'DOGFOOD_AGENT_RESUMED') {
  return (
    _root: unknown,
    { role, after }: z.output<typeof pauseSubscriptionArgs>,
    context: AuthedContext,
  ) => {
    const wanted = role ? normalizeRole(role) : null;
    return eventStream(context, [type], after, (event) => !wanted || event.payload.role === wanted);
  };
}

builder.subscriptionField('agentPaused', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentPausedEvent,
    description:
      'Pauses of agent roles in the subscriber’s tenant (people’s and breakers’), optionally of one role.',
    ...zodSubscription(t, pauseSubscriptionArgs, pauseEvents('DOGFOOD_AGENT_PAUSED')),
    resolve: (event) => event.payload as unknown as PausePayload,
  }),
);

builder.subscriptionField('agentResumed', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentResumedEvent,
    description: 'Resumes of agent roles in the subscriber’s tenant, optionally of one role.',
    ...zodSubscription(t, pauseSubscriptionArgs, pauseEvents('DOGFOOD_AGENT_RESUMED')),
    resolve: (event) => event.payload as unknown as PausePayload,
  }),
);
