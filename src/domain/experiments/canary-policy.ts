import { z } from 'zod';
import { GUARDRAIL_DIRECTIONS, GUARDRAIL_METRICS } from './canary.js';

/**
 * What a policy does with a verdict:
 * - `rollback_automatically`: a worse canary is taken off canary; a canary found not worse is only
 *   recommended for promotion.
 * - `promote_automatically`: as above, and a canary found not worse is promoted.
 * - `recommend_only`: a dry run; verdicts are recorded and shown, nothing changes.
 */
export const CANARY_ACTIONS = ['rollback_automatically', 'promote_automatically', 'recommend_only'] as const;

export const MAX_MINIMUM_TASKS = 10_000_000;
/** 365 days. */
export const MAX_DURATION_SECONDS = 31_536_000;

export const guardrailSchema = z.object({
  metric: z.enum(GUARDRAIL_METRICS),
  direction: z.enum(GUARDRAIL_DIRECTIONS),
  tolerance: z.number().min(0).max(1),
});

/**
 * A base model's canary rollout policy, as GraphQL inputs name it (REST's snake_case keys are camelised
 * before validation). Each metric is guarded at most once.
 */
export const canaryRolloutPolicySchema = z.object({
  guardrails: z
    .array(guardrailSchema)
    .min(1)
    .max(GUARDRAIL_METRICS.length)
    .superRefine((guardrails, ctx) => {
      const seen = new Set<string>();
      guardrails.forEach((guardrail, index) => {
        if (seen.has(guardrail.metric)) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'metric'],
            input: guardrail.metric,
            message: `each metric is guarded once; '${guardrail.metric}' repeats an earlier guardrail`,
          });
        }
        seen.add(guardrail.metric);
      });
    }),
  minimumTasks: z.int().min(1).max(MAX_MINIMUM_TASKS),
  maxDurationSeconds: z.int().positive().max(MAX_DURATION_SECONDS),
  action: z.enum(CANARY_ACTIONS),
});
