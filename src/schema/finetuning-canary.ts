import { z } from 'zod';
import { builder } from '../builder.js';
import type { Guardrail } from '../domain/experiments/canary.js';
import { canaryRolloutPolicySchema, guardrailSchema } from '../domain/experiments/canary-policy.js';
import { analyzeCanaryRun, setCanaryPolicy } from '../domain/finetuning/canary-rollout.js';
import { loadLine } from '../domain/finetuning/registry.js';
import type { CanaryPolicy } from '../generated/prisma/client.js';
import { zodField, zodInputType } from './args.js';
import { ModelVersionRef } from './finetuning.js';

const GuardrailRef = builder.objectRef<Guardrail>('CanaryGuardrail').implement({
  fields: (t) => ({
    metric: t.exposeString('metric', { description: 'failure_rate, acceptance_rate or outcome_accuracy.' }),
    direction: t.exposeString('direction', { description: 'higher_is_better or lower_is_better.' }),
    tolerance: t.exposeFloat('tolerance', {
      description: 'The largest difference of rates in the bad direction still counted as not worse.',
    }),
  }),
});

const CanaryPolicyRef = builder.objectRef<CanaryPolicy>('CanaryPolicy').implement({
  description:
    'How the canary of a base model is judged against production, and what is done with the verdict.',
  fields: (t) => ({
    guardrails: t.field({
      type: [GuardrailRef],
      resolve: (policy) => policy.guardrails as unknown as Guardrail[],
    }),
    minimumTasks: t.exposeInt('minimumTasks'),
    maxDurationSeconds: t.exposeInt('maxDurationSeconds'),
    action: t.exposeString('action', {
      description: 'rollback_automatically, promote_automatically or recommend_only.',
    }),
    updatedBy: t.exposeString('updatedBy'),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

// The rules are the domain's; GraphQL types the enums of the rules as strings, described here.
zodInputType('CanaryGuardrailInput', guardrailSchema, {
  fields: {
    metric: { type: 'String', description: 'failure_rate, acceptance_rate or outcome_accuracy.' },
    direction: { type: 'String', description: 'higher_is_better or lower_is_better.' },
    tolerance: { description: '0 to 1.' },
  },
});

zodInputType('CanaryPolicyInput', canaryRolloutPolicySchema, {
  fields: {
    guardrails: { description: '1–3, each metric once.' },
    minimumTasks: { description: 'Canary tasks before it may be promoted; ≥ 1.' },
    maxDurationSeconds: { description: 'At most 365 days.' },
    action: {
      type: 'String',
      description: 'rollback_automatically, promote_automatically or recommend_only.',
    },
  },
});

const baseModelArg = z.string().min(1).max(200);

builder.mutationField('setCanaryPolicy', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: CanaryPolicyRef,
    description:
      'Sets the canary rollout policy of a base model (operator or chairman; 404 for an unknown base model). ' +
      'Audited.',
    ...zodField(
      t,
      z.object({
        baseModel: baseModelArg,
        input: canaryRolloutPolicySchema,
      }),
      (_root, { baseModel, input }, context) => setCanaryPolicy(context, baseModel, input),
    ),
  }),
);

builder.queryField('canaryPolicy', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: CanaryPolicyRef,
    nullable: true,
    description: 'The canary rollout policy of a base model; null when it has none.',
    ...zodField(t, z.object({ baseModel: baseModelArg }), (_root, { baseModel }, context) =>
      context.prisma.canaryPolicy.findFirst({
        where: { tenantId: context.viewer.tenantId, line: { baseModel } },
      }),
    ),
  }),
);

interface CanaryAnalysisView {
  /** collecting, inconclusive, worse, not_worse or expired. */
  state: string;
  decided: boolean;
  action: string | null;
  canaryStartedAt: Date;
  decidedAt: Date | null;
  evidence: unknown;
}

const CanaryAnalysisRef = builder.objectRef<CanaryAnalysisView>('CanaryAnalysis').implement({
  description:
    'The canary analysis of a version: live while it runs, or the decision that ended its latest canary run.',
  fields: (t) => ({
    state: t.exposeString('state', {
      description:
        'collecting (too few outcomes), inconclusive, worse, not_worse, or expired (the maximum duration ' +
        'passed without a verdict).',
    }),
    decided: t.exposeBoolean('decided', { description: 'True once the analysis has acted or recommended.' }),
    action: t.exposeString('action', {
      nullable: true,
      description: 'rolled_back, promoted or recommended, once decided.',
    }),
    canaryStartedAt: t.expose('canaryStartedAt', { type: 'DateTime' }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
    evidence: t.expose('evidence', {
      type: 'JSON',
      description:
        'Per guardrail: metric, direction, tolerance, verdict, both counts and rates, the difference and its ' +
        'always-valid confidence sequence; the canary’s tasks and the minimum.',
    }),
  }),
});

builder.objectField(ModelVersionRef, 'canaryAnalysis', (t) =>
  t.field({
    type: CanaryAnalysisRef,
    nullable: true,
    description:
      'The canary analysis of this version under its base model’s policy: the decision of its latest canary ' +
      'run, or, while it is on canary and undecided, the analysis as it stands; null otherwise.',
    resolve: async (version, _args, context) => {
      const decision = await context.prisma.canaryDecision.findFirst({
        where: { modelVersionId: version.id, tenantId: version.tenantId },
        orderBy: { canaryStartedAt: 'desc' },
      });
      const state = await loadLine(context.prisma as never, version.lineId, version.baseModel);
      const startedAt = state.history
        .filter((entry) => entry.modelVersionId === version.id && entry.toStatus === 'canary')
        .at(-1)?.at;
      if (decision && decision.canaryStartedAt.getTime() === startedAt?.getTime()) {
        return {
          state: decision.verdict,
          decided: true,
          action: decision.action,
          canaryStartedAt: decision.canaryStartedAt,
          decidedAt: decision.createdAt,
          evidence: decision.evidence,
        };
      }
      if (version.deploymentStatus !== 'canary') return null;
      const policy = await context.prisma.canaryPolicy.findUnique({ where: { lineId: version.lineId } });
      if (!policy) return null;
      const run = await analyzeCanaryRun(context.prisma, state, policy, new Date());
      if (!run) return null;
      return {
        state:
          run.analysis.verdict === 'collecting' || run.analysis.verdict === 'inconclusive'
            ? run.expired
              ? 'expired'
              : run.analysis.verdict
            : run.analysis.verdict,
        decided: false,
        action: null,
        canaryStartedAt: run.startedAt,
        decidedAt: null,
        evidence: {
          verdict: run.analysis.verdict,
          canary_tasks: run.canaryTasks,
          minimum_tasks: policy.minimumTasks,
          guardrails: run.analysis.guardrails,
        },
      };
    },
  }),
);
