import { z } from 'zod';
import { builder } from '../../builder.js';
import {
  COST_GROUPS,
  type CostAttribution,
  type CostAttributionRow,
  costAttribution,
  MAX_ATTRIBUTION_DAYS,
} from '../../domain/agents/cost-attribution.js';
import { graphqlArg, zodField } from '../args.js';

const CostGroupEnum = builder.enumType('CostGroup', {
  description:
    'How costAttribution groups tasks: by ROLE, MODEL_VERSION, THREAD, ROOT_TASK (with everything delegated under it), ROUTINE or CONNECTOR.',
  values: COST_GROUPS,
});

const CostAttributionRowRef = builder.objectRef<CostAttributionRow>('CostAttributionRow').implement({
  description: 'The cost and tokens of the tasks of one group.',
  fields: (t) => ({
    key: t.exposeID('key', {
      nullable: true,
      description:
        'The role, or the id of the model version, thread, root task, routine or connector; null for the tasks with none.',
    }),
    label: t.exposeString('label'),
    costUsd: t.exposeString('costUsd', { description: 'US dollars, an exact decimal string (6 decimals).' }),
    tokensUsed: t.expose('tokensUsed', { type: 'SafeInt' }),
    inputTokens: t.expose('inputTokens', {
      type: 'SafeInt',
      description: 'Of the tasks that reported a breakdown.',
    }),
    outputTokens: t.expose('outputTokens', {
      type: 'SafeInt',
      description: 'Of the tasks that reported a breakdown.',
    }),
    tasks: t.exposeInt('tasks', { description: 'Tasks that finished in the period.' }),
    connectorCalls: t.exposeInt('connectorCalls', {
      description: 'CONNECTOR: the calls the tasks made to it; 0 in the other groupings.',
    }),
  }),
});

const CostAttributionRef = builder.objectRef<CostAttribution>('CostAttribution').implement({
  description:
    'Cost and tokens of the tasks that finished in [from, to), grouped; the rows add up to the totals, which are those of the vitals and the budgets for the same tasks.',
  fields: (t) => ({
    groupBy: t.field({ type: CostGroupEnum, resolve: (attribution) => attribution.groupBy }),
    from: t.expose('from', { type: 'DateTime' }),
    to: t.expose('to', { type: 'DateTime' }),
    rows: t.field({ type: [CostAttributionRowRef], resolve: (attribution) => attribution.rows }),
    totalCostUsd: t.exposeString('totalCostUsd', { description: 'Exact decimal string.' }),
    totalTokensUsed: t.expose('totalTokensUsed', { type: 'SafeInt' }),
    tasks: t.exposeInt('tasks'),
  }),
});

const attributionArgs = z.object({
  groupBy: graphqlArg(z.enum(COST_GROUPS), { type: CostGroupEnum }),
  from: graphqlArg(z.date().nullish(), {
    type: 'DateTime',
    description: 'Start of the period (inclusive); default 24 hours before `to`.',
  }),
  to: graphqlArg(z.date().nullish(), {
    type: 'DateTime',
    description: `End of the period (exclusive); default now. At most ${MAX_ATTRIBUTION_DAYS} days after from.`,
  }),
});

builder.queryField('costAttribution', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: CostAttributionRef,
    description:
      'Cost and tokens of the caller’s tenant’s tasks that finished in a period (an agent token: of its roles), by role, model version, thread, root task, routine or connector (docs/cost-attribution.md). BAD_USER_INPUT, reason `invalid_period`, unless from < to within 366 days.',
    ...zodField(t, attributionArgs, (_root, { groupBy, from, to }, context) =>
      costAttribution(context, groupBy, { from, to }),
    ),
  }),
);
