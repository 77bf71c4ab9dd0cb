import { z } from 'zod';
import { builder } from '../../builder.js';
import { bindAgentModel, type ModelRouting, type RoutingChoice } from '../../domain/agents/model-routing.js';
import { graphqlArg, zodField } from '../args.js';
import { AgentRoleRef, roleArg, TaskRef } from './types.js';

builder.prismaObjectField(AgentRoleRef, 'baseModel', (t) =>
  t.exposeString('baseModel', {
    nullable: true,
    description:
      'The base model a claim of this role routes to (its production version, or its canary for a share of ' +
      'threads); null when the role is bound to none.',
  }),
);

builder.prismaObjectField(TaskRef, 'modelVersion', (t) =>
  t.relation('modelVersion', {
    nullable: true,
    description:
      'The model version the agent must use, chosen when the task was claimed and kept while it runs; null ' +
      'when the role is bound to no base model or its base model had no production version.',
  }),
);

const RoutingChoiceEnum = builder.enumType('ModelRoutingChoice', {
  description:
    'How a claimed task’s model version was chosen: `production` or `canary` of the role’s base model; ' +
    '`no_production` when that base model has no production version and `unbound` when the role is bound ' +
    'to none (both leave the task without a version).',
  values: ['unbound', 'no_production', 'production', 'canary'] as const satisfies readonly RoutingChoice[],
});

export const ModelRoutingRef = builder.objectRef<ModelRouting>('ModelRouting').implement({
  description: 'Which model version a claim gave its task, and why.',
  fields: (t) => ({
    choice: t.field({ type: RoutingChoiceEnum, resolve: (routing) => routing.choice }),
    baseModel: t.exposeString('baseModel', { nullable: true }),
    modelVersionId: t.exposeID('modelVersionId', { nullable: true }),
    sticky: t.exposeBoolean('sticky', {
      description:
        'True when the version is the one the task’s thread (or the task, claimed again) was given before, ' +
        'kept because it is still production or canary.',
    }),
  }),
});

const bindArgs = z.object({
  role: roleArg,
  baseModel: graphqlArg(
    z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/)
      .nullish(),
    { description: 'Omitted or null: the role is unbound.' },
  ),
});

builder.mutationField('bindAgentModel', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AgentRoleRef,
    description:
      'Binds an agent role to a base model of the tenant (null unbinds), operator or chairman: its next ' +
      'claims carry that base model’s production version, or its canary for canaryTrafficPct % of threads. ' +
      '404 for an unknown role or base model. Audited.',
    ...zodField(t, bindArgs, (_root, { role, baseModel }, context) =>
      bindAgentModel(context, role, baseModel ?? null),
    ),
  }),
);
