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

export const pauseArgs = z.object({ role: z.string().min(1).max(64), input: pauseInput });

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
    description: 'Pauses a C-suite agent. Idempotent: a repeat answers with the original pause.',
    ...zodField(t, pauseArgs, (_root, { role, input }, context) => pauseAgent(context, { role, ...input })),
  }),
);

builder.mutationField('resumeAgent', (t) =>
  t.withAuth({ chairman: true }).field({
    type: PauseResult,
    description: 'Resumes a paused C-suite agent. Idempotent: a repeat answers with the last resume.',
    ...zodField(t, pauseArgs, (_root, { role, input }, context) => resumeAgent(context, { role, ...input })),
  }),
);

export interface PausePayload {
  event_id: string;
  tenant_id: string;
  role: string;
  actor_user_id: string;
  paused_at?: string;
  resumed_at?: string;
}

export const AgentPausedEvent = builder.objectRef<PausePayload>('AgentPausedEvent').implement({
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    role: t.exposeString('role'),
    actorUserId: t.exposeString('actor_user_id'),
    pausedAt: t.field({ type: 'DateTime', resolve: (event) => event.paused_at ?? '' }),
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
    description: 'C-suite pauses in the subscriber’s tenant, optionally of one role.',
    ...zodSubscription(t, pauseSubscriptionArgs, pauseEvents('DOGFOOD_AGENT_PAUSED')),
    resolve: (event) => event.payload as unknown as PausePayload,
  }),
);

builder.subscriptionField('agentResumed', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentResumedEvent,
    description: 'C-suite resumes in the subscriber’s tenant, optionally of one role.',
    ...zodSubscription(t, pauseSubscriptionArgs, pauseEvents('DOGFOOD_AGENT_RESUMED')),
    resolve: (event) => event.payload as unknown as PausePayload,
  }),
);
