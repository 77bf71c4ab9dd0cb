import { z } from 'zod';
import { builder } from '../../builder.js';
import type { BudgetPeriodKind } from '../../domain/agents/budget-period.js';
import { setBudget } from '../../domain/agents/budget-settings.js';
import {
  type BudgetState,
  type budgetAlertPayload,
  readBudgets,
  remainingTokens,
  remainingUsd,
  TENANT_BUDGET,
} from '../../domain/agents/budgets.js';
import { claimNextTaskWaiting, MAX_CLAIM_WAIT_SECONDS } from '../../domain/agents/claim-wait.js';
import type { ModelRouting } from '../../domain/agents/model-routing.js';
import type { ClaimOutcome, claimNextTask } from '../../domain/agents/queue.js';
import { requireAgentRole } from '../../domain/agents/registry.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import { releasingAdmission } from '../admission.js';
import { graphqlArg, zodField, zodInputType } from '../args.js';
import { ModelRoutingRef } from './routing.js';
import { AgentRoleRef, roleArg, TaskRef } from './types.js';

const BudgetPeriodEnum = builder.enumType('BudgetPeriod', {
  description: 'A UTC day, or a calendar month in UTC.',
  values: ['day', 'month'] as const,
});

/** The largest limit or estimate accepted, in US dollars. */
const MAX_USD = 1_000_000_000;

/** A plain decimal string of US dollars: digits, an optional point and at most 6 decimals (micro-dollars). */
const usdAmount = z
  .string()
  .regex(/^\d{1,10}(\.\d{1,6})?$/, 'must be a decimal number of US dollars with at most 6 decimals')
  .refine((value) => Number(value) <= MAX_USD, `must be at most ${MAX_USD}`);

const decimal = (budget: BudgetState, pick: (budget: BudgetState) => { toFixed(): string }) =>
  pick(budget).toFixed();

export const BudgetRef = builder.objectRef<BudgetState>('Budget').implement({
  description:
    'A spending limit of an agent role, or of the tenant as a whole, for the current period. Amounts are ' +
    'exact decimal strings of US dollars. A claim reserves the estimate until its task completes (its ' +
    'actual cost is then charged), fails or loses its lease; a claim that would take spent + reserved + ' +
    'estimate past the limit is refused.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role', { nullable: true, description: 'The agent role; null for the tenant.' }),
    period: t.field({ type: BudgetPeriodEnum, resolve: (budget) => budget.period }),
    limitUsd: t.string({ resolve: (budget) => decimal(budget, (b) => b.limitUsd) }),
    limitTokens: t.field({
      type: 'SafeInt',
      nullable: true,
      description: 'Null when tokens are not limited.',
      resolve: (budget) => (budget.limitTokens === null ? null : Number(budget.limitTokens)),
    }),
    warningThreshold: t.float({
      description: 'Share of the limit whose spending publishes BUDGET_WARNING (once a period).',
      resolve: (budget) => budget.warningThreshold.toNumber(),
    }),
    estimateUsd: t.string({
      description: 'Reserved by each claim until the task ends.',
      resolve: (budget) => decimal(budget, (b) => b.estimateUsd),
    }),
    estimateTokens: t.field({ type: 'SafeInt', resolve: (budget) => Number(budget.estimateTokens) }),
    spentUsd: t.string({
      description: 'Actual cost of tasks completed this period.',
      resolve: (budget) => decimal(budget, (b) => b.spentUsd),
    }),
    reservedUsd: t.string({
      description: 'Estimates held by running tasks.',
      resolve: (budget) => decimal(budget, (b) => b.reservedUsd),
    }),
    remainingUsd: t.string({
      description: 'limit − spent − reserved, never below 0.',
      resolve: (budget) => remainingUsd(budget).toFixed(),
    }),
    overshootUsd: t.string({
      description: 'Cost charged this period beyond what the tasks had reserved (each case is audited).',
      resolve: (budget) => decimal(budget, (b) => b.overshootUsd),
    }),
    spentTokens: t.field({ type: 'SafeInt', resolve: (budget) => Number(budget.spentTokens) }),
    reservedTokens: t.field({ type: 'SafeInt', resolve: (budget) => Number(budget.reservedTokens) }),
    remainingTokens: t.field({
      type: 'SafeInt',
      nullable: true,
      resolve: (budget) => {
        const left = remainingTokens(budget);
        return left === null ? null : Number(left);
      },
    }),
    periodStart: t.field({ type: 'DateTime', resolve: (budget) => budget.periodStart }),
    periodEnd: t.field({
      type: 'DateTime',
      description: 'Exclusive: when the next period starts.',
      resolve: (budget) => budget.periodEnd,
    }),
    warnedAt: t.field({ type: 'DateTime', nullable: true, resolve: (budget) => budget.warnedAt }),
    exhaustedAt: t.field({ type: 'DateTime', nullable: true, resolve: (budget) => budget.exhaustedAt }),
  }),
});

builder.objectField(AgentRoleRef, 'budget', (t) =>
  t.field({
    type: BudgetRef,
    nullable: true,
    description: 'The role’s own budget for the current period; null when none is set.',
    resolve: async (role, _args, context) => {
      const [budget] = await readBudgets(context.prisma, role.tenantId, role.role);
      return budget ?? null;
    },
  }),
);

builder.queryField('budgets', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [BudgetRef],
    description: 'The budgets of the caller’s tenant: the tenant’s first, then the roles’ by name.',
    resolve: (_root, _args, context) => readBudgets(context.prisma, context.viewer.tenantId),
  }),
);

builder.queryField('budget', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: BudgetRef,
    nullable: true,
    description:
      'The budget of an agent role (or, without a role, of the tenant); null when none is set. 404 for a ' +
      'role the tenant does not have.',
    ...zodField(t, z.object({ role: roleArg.nullish() }), async (_root, { role }, context) => {
      if (role) await requireAgentRole(context, role);
      const [budget] = await readBudgets(
        context.prisma,
        context.viewer.tenantId,
        role ? normalizeRole(role) : TENANT_BUDGET,
      );
      return budget ?? null;
    }),
  }),
);

const setBudgetInput = z
  .object({
    role: graphqlArg(roleArg.nullish(), {
      description: 'An agent role of the tenant; omit for the tenant as a whole.',
    }),
    period: graphqlArg(z.enum(['day', 'month']), { type: BudgetPeriodEnum }),
    limitUsd: graphqlArg(usdAmount, {
      description: 'US dollars as a decimal string ("250", "12.5"): at most 6 decimals, 0 to 1000000000.',
    }),
    estimateUsd: graphqlArg(
      usdAmount.refine((value) => Number(value) > 0, 'must be more than 0'),
      { description: 'Reserved by each claim until its task ends; more than 0, at most 6 decimals.' },
    ),
    limitTokens: graphqlArg(z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullish(), {
      type: 'SafeInt',
      description: 'Optional token limit per period, at least 1.',
    }),
    estimateTokens: graphqlArg(z.int().min(0).max(Number.MAX_SAFE_INTEGER).nullish(), {
      type: 'SafeInt',
      description: 'Tokens reserved by each claim; required (at least 1) with limitTokens.',
    }),
    warningThreshold: graphqlArg(
      z
        .number()
        .gt(0)
        .lte(1)
        .refine((value) => Number(value.toFixed(3)) === value, 'must have at most 3 decimals')
        .nullish(),
      {
        description:
          'Share of the limit that publishes BUDGET_WARNING: more than 0, at most 1, 3 decimals. Default 0.8.',
      },
    ),
  })
  .refine((input) => input.limitTokens == null || (input.estimateTokens ?? 0) >= 1, {
    message: 'estimateTokens of at least 1 is required with limitTokens',
    path: ['estimateTokens'],
  });
zodInputType('SetBudgetInput', setBudgetInput);

const setBudgetArgs = z.object({ input: setBudgetInput });

builder.mutationField('setBudget', (t) =>
  t.withAuth({ chairman: true }).field({
    type: BudgetRef,
    description:
      'Creates or changes the budget of an agent role, or of the tenant (chairman only). A new budget starts ' +
      'from what the current period already spent; a limit below it stops new claims at once. Audited.',
    ...zodField(t, setBudgetArgs, (_root, { input }, context) =>
      setBudget(context, {
        role: input.role,
        period: input.period as BudgetPeriodKind,
        limitUsd: input.limitUsd,
        estimateUsd: input.estimateUsd,
        limitTokens: input.limitTokens,
        estimateTokens: input.estimateTokens,
        warningThreshold: input.warningThreshold ?? 0.8,
      }),
    ),
  }),
);

const TaskClaimOutcomeEnum = builder.enumType('TaskClaimOutcome', {
  description:
    'How a claim ended: `claimed`, or why nothing was handed out, checked in this order: the role is paused, ' +
    'the tenant’s budget or the role’s budget has no room for one more task, the queue has nothing pending.',
  values: [
    'claimed',
    'role_paused',
    'tenant_budget_exhausted',
    'role_budget_exhausted',
    'queue_empty',
  ] as const satisfies readonly ClaimOutcome[],
});

interface TaskClaim {
  outcome: ClaimOutcome;
  task: Awaited<ReturnType<typeof claimNextTask>>['task'];
  budget: BudgetState | null;
  routing: ModelRouting | null;
}

const TaskClaimRef = builder.objectRef<TaskClaim>('TaskClaim').implement({
  description: 'The answer of claimNextTask: the task, or why there was none.',
  fields: (t) => ({
    outcome: t.field({ type: TaskClaimOutcomeEnum, resolve: (claim) => claim.outcome }),
    task: t.field({ type: TaskRef, nullable: true, resolve: (claim) => claim.task }),
    budget: t.field({
      type: BudgetRef,
      nullable: true,
      description: 'The budget that refused the claim, as it stood.',
      resolve: (claim) => claim.budget,
    }),
    retryAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When a budget refused: the start of its next period (sooner if the limit is raised or running tasks end).',
      resolve: (claim) => claim.budget?.periodEnd ?? null,
    }),
    routing: t.field({
      type: ModelRoutingRef,
      nullable: true,
      description: 'How the claimed task’s model version was chosen; null when nothing was claimed.',
      resolve: (claim) => claim.routing,
    }),
  }),
});

builder.mutationField('claimNextTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskClaimRef,
    description:
      'claimTask that says why it handed out nothing: takes the oldest pending task of a role under a ' +
      '5-minute lease, reserving its budgets’ estimates, or answers the reason. A refusal changes nothing. ' +
      `With \`waitSeconds\` (0 to ${MAX_CLAIM_WAIT_SECONDS}, default 0: answer at once), waits that long for a ` +
      'claimable task without polling: the commit that queues one for the role or resumes it, or gives the ' +
      'refusing budget room (a task releasing its reservation, setBudget, the next period), wakes the claim on ' +
      'any instance. Answers the reason of the last attempt when the ' +
      'wait ends with nothing; a client that goes away ends its wait.',
    ...zodField(
      t,
      z.object({
        role: roleArg,
        waitSeconds: graphqlArg(z.int().min(0).max(MAX_CLAIM_WAIT_SECONDS).nullish(), {
          description: `0 to ${MAX_CLAIM_WAIT_SECONDS}; default 0.`,
        }),
      }),
      (_root, { role, waitSeconds }, context) =>
        claimNextTaskWaiting(context, context.services.bus, role, {
          waitMs: (waitSeconds ?? 0) * 1000,
          signal: context.signal,
          beforeWait: releasingAdmission(context),
        }),
    ),
  }),
);

type BudgetEventPayload = ReturnType<typeof budgetAlertPayload> & {
  event_id: string;
  tenant_id: string;
  type: 'BUDGET_WARNING' | 'BUDGET_EXHAUSTED' | 'BUDGET_CHANGED';
};

export const BudgetAlertEvent = builder.objectRef<BudgetEventPayload>('BudgetAlertEvent').implement({
  description:
    'A budget passed its warning threshold (BUDGET_WARNING) or has no room for one more task ' +
    '(BUDGET_EXHAUSTED); each at most once per budget and period.',
  fields: (t) => ({
    alert: t.exposeString('type', { description: 'BUDGET_WARNING or BUDGET_EXHAUSTED.' }),
    ...budgetEventFields(t),
  }),
});

export const BudgetChangedEvent = builder.objectRef<BudgetEventPayload>('BudgetChangedEvent').implement({
  description:
    'The chairman set a budget (BUDGET_CHANGED): created it or changed its limits, estimates or period. ' +
    'Claims it turned away try again.',
  fields: (t) => budgetEventFields(t),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The fields every budget event has: the budget as it stood after the change. */
function budgetEventFields(t: PothosSchemaTypes.ObjectFieldBuilder<Types, BudgetEventPayload>) {
  return {
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    budgetId: t.exposeID('budget_id'),
    role: t.exposeString('role', { nullable: true, description: 'Null for the tenant’s budget.' }),
    period: t.field({ type: BudgetPeriodEnum, resolve: (event) => event.period }),
    periodStart: t.field({ type: 'DateTime', resolve: (event) => event.period_start }),
    periodEnd: t.field({ type: 'DateTime', resolve: (event) => event.period_end }),
    limitUsd: t.exposeString('limit_usd'),
    spentUsd: t.exposeString('spent_usd'),
    reservedUsd: t.exposeString('reserved_usd'),
    warningThreshold: t.exposeFloat('warning_threshold'),
  };
}
