import { z } from 'zod';
import { recordAudit } from '../audit.js';
import { builder, validatedArgs } from '../builder.js';
import { normalizeRole } from '../domain/agents/roles.js';
import { type PauseState, pauseAgent, resumeAgent } from '../domain/dogfood/pause.js';
import type { BusEvent } from '../events/topics.js';

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
    args: { enabled: t.arg.boolean({ required: true }) },
    resolve: async (_root, { enabled }, context) =>
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
  }),
);

const PauseInput = builder.inputType('PauseInput', {
  fields: (t) => ({
    actorUserId: t.string({
      required: true,
      description: 'The CEO or chairman issuing the pause or resume.',
    }),
    reason: t.string({ description: 'Kept in the audit log only; never published.' }),
  }),
});

export const pauseArgs = z.object({
  role: z.string().min(1).max(64),
  input: z.object({
    actorUserId: z.string().trim().min(1).max(200),
    reason: z.string().max(2000).nullish(),
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
    description: 'Pauses a C-suite agent. Idempotent: a repeat answers with the original pause.',
    args: { role: t.arg.string({ required: true }), input: t.arg({ type: PauseInput, required: true }) },
    ...validatedArgs(pauseArgs, (_root, { role, input }, context) => pauseAgent(context, { role, ...input })),
  }),
);

builder.mutationField('resumeAgent', (t) =>
  t.withAuth({ chairman: true }).field({
    type: PauseResult,
    description: 'Resumes a paused C-suite agent. Idempotent: a repeat answers with the last resume.',
    args: { role: t.arg.string({ required: true }), input: t.arg({ type: PauseInput, required: true }) },
    ...validatedArgs(pauseArgs, (_root, { role, input }, context) =>
      resumeAgent(context, { role, ...input }),
    ),
  }),
);

interface PausePayload {
  event_id: string;
  tenant_id: string;
  role: string;
  actor_user_id: string;
  paused_at?: string;
  resumed_at?: string;
}

const AgentPausedEvent = builder.objectRef<PausePayload>('AgentPausedEvent').implement({
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    role: t.exposeString('role'),
    actorUserId: t.exposeString('actor_user_id'),
    pausedAt: t.field({ type: 'DateTime', resolve: (event) => event.paused_at ?? '' }),
  }),
});

const AgentResumedEvent = builder.objectRef<PausePayload>('AgentResumedEvent').implement({
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    role: t.exposeString('role'),
    actorUserId: t.exposeString('actor_user_id'),
    resumedAt: t.field({ type: 'DateTime', resolve: (event) => event.resumed_at ?? '' }),
  }),
});

async function* eventsFor(iterable: AsyncIterable<BusEvent>, role: string | null | undefined) {
  const wanted = role ? normalizeRole(role) : null;
  for await (const event of iterable) {
    const payload = event.payload as unknown as PausePayload;
    if (!wanted || payload.role === wanted) yield payload;
  }
}

builder.subscriptionField('agentPaused', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentPausedEvent,
    description: 'C-suite pauses in the subscriber’s tenant, optionally of one role.',
    args: { role: t.arg.string() },
    subscribe: (_root, { role }, context) =>
      eventsFor(context.services.bus.subscribe('DOGFOOD_AGENT_PAUSED', context.viewer.tenantId), role),
    resolve: (payload) => payload,
  }),
);

builder.subscriptionField('agentResumed', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentResumedEvent,
    description: 'C-suite resumes in the subscriber’s tenant, optionally of one role.',
    args: { role: t.arg.string() },
    subscribe: (_root, { role }, context) =>
      eventsFor(context.services.bus.subscribe('DOGFOOD_AGENT_RESUMED', context.viewer.tenantId), role),
    resolve: (payload) => payload,
  }),
);
