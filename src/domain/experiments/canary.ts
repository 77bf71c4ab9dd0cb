import {
  assertAlpha,
  comparable,
  confidenceSequence,
  DEFAULT_EXPECTED_OBSERVATIONS,
  mixtureRhoSquared,
  type SequentialTuning,
} from './confidence-sequence.js';
import type { Interval } from './intervals.js';
import { DEFAULT_ALPHA, type VariantCounts } from './statistics.js';

export const GUARDRAIL_METRICS = ['failure_rate', 'acceptance_rate', 'outcome_accuracy'] as const;
export type GuardrailMetric = (typeof GUARDRAIL_METRICS)[number];

export const GUARDRAIL_DIRECTIONS = ['higher_is_better', 'lower_is_better'] as const;
export type GuardrailDirection = (typeof GUARDRAIL_DIRECTIONS)[number];

/**
 * - `collecting`: the canary has fewer tasks than the minimum (or no outcome yet) and is not shown worse.
 * - `worse`: the canary is worse than production by more than the tolerance, with always-valid confidence.
 * - `not_worse`: after the minimum, the canary is shown to be no worse than production by the tolerance.
 * - `inconclusive`: after the minimum, neither is shown yet.
 */
export type GuardrailVerdict = 'collecting' | 'worse' | 'not_worse' | 'inconclusive';

export interface Guardrail {
  metric: GuardrailMetric;
  direction: GuardrailDirection;
  /** The largest difference of rates, in the bad direction, that still counts as not worse; in [0, 1]. */
  tolerance: number;
}

export interface GuardrailCounts {
  /** Production's outcomes over the same period as the canary's. */
  production: VariantCounts;
  canary: VariantCounts;
}

export interface GuardrailInput extends Guardrail, GuardrailCounts, SequentialTuning {
  /** Canary tasks needed before `not_worse` (a worse canary is named as soon as it is shown). */
  minimumTasks: number;
  /**
   * Tasks the canary has run, held against `minimumTasks`. Default: the canary's observations of this
   * metric, which are its tasks for the failure rate but its decided recommendations or evaluated outcomes
   * for the others.
   */
  canaryTasks?: number;
  /** Chance, over the whole analysis, of naming worse a canary that is not, or the reverse (default 0.05). */
  alpha?: number;
}

export interface RateEvidence extends VariantCounts {
  /** successes / observations; null without observations. */
  rate: number | null;
}

export interface GuardrailEvidence extends Guardrail {
  verdict: GuardrailVerdict;
  production: RateEvidence;
  canary: RateEvidence;
  /** canary rate - production rate; null while either has no observations. */
  difference: number | null;
  /** Confidence sequence of `difference` at `confidence`. */
  confidenceSequence: Interval | null;
  confidence: number;
}

function rateEvidence(counts: VariantCounts): RateEvidence {
  const { observations, successes } = counts;
  return { observations, successes, rate: observations === 0 ? null : successes / observations };
}

function assertGuardrail(input: GuardrailInput): void {
  if (!(GUARDRAIL_DIRECTIONS as readonly string[]).includes(input.direction)) {
    throw new RangeError(
      `direction must be one of ${GUARDRAIL_DIRECTIONS.join(', ')}, got ${input.direction}`,
    );
  }
  if (!(input.tolerance >= 0 && input.tolerance <= 1)) {
    throw new RangeError(`tolerance must lie between 0 and 1, got ${input.tolerance}`);
  }
  if (!(Number.isSafeInteger(input.minimumTasks) && input.minimumTasks >= 1)) {
    throw new RangeError(`minimumTasks must be an integer of at least 1, got ${input.minimumTasks}`);
  }
  const tasks = input.canaryTasks;
  if (tasks !== undefined && !(Number.isSafeInteger(tasks) && tasks >= 0)) {
    throw new RangeError(`canaryTasks must be a non-negative integer, got ${tasks}`);
  }
}

/**
 * Compares a canary with production on one guardrail metric with the A/B tests' confidence sequence (see
 * `confidence-sequence.ts`), so that it may be evaluated after every batch of outcomes. "Harm" is the
 * difference in the bad direction (canary - production for a rate where lower is better, production -
 * canary otherwise). The canary is worse when the whole interval of harm lies above the tolerance, and
 * not worse when it lies below it. A tolerance of 0 thus asks a canary to be shown better to pass.
 * Worse is reported as soon as it is shown, before the minimum: the interval is valid at every look, and
 * the minimum is there to keep a promotion from resting on a handful of tasks.
 */
export function compareGuardrail(input: GuardrailInput): GuardrailEvidence {
  const alpha = input.alpha ?? DEFAULT_ALPHA;
  assertAlpha(alpha);
  assertGuardrail(input);
  const { metric, direction, tolerance } = input;
  const pair = comparable(input.production, input.canary);
  const evidence = {
    metric,
    direction,
    tolerance,
    production: rateEvidence(input.production),
    canary: rateEvidence(input.canary),
    confidence: 1 - alpha,
  };
  if (pair === null) {
    return { ...evidence, verdict: 'collecting', difference: null, confidenceSequence: null };
  }
  const rhoSquared = mixtureRhoSquared(alpha, input.expectedObservations ?? DEFAULT_EXPECTED_OBSERVATIONS);
  const interval = confidenceSequence(pair, rhoSquared, alpha);
  const harm =
    direction === 'lower_is_better' ? interval : { lower: -interval.upper, upper: -interval.lower };
  let verdict: GuardrailVerdict;
  if (harm.lower > tolerance) verdict = 'worse';
  else if ((input.canaryTasks ?? input.canary.observations) < input.minimumTasks) verdict = 'collecting';
  else if (harm.upper < tolerance) verdict = 'not_worse';
  else verdict = 'inconclusive';
  return { ...evidence, verdict, difference: pair.difference, confidenceSequence: interval };
}

export interface CanaryAnalysisInput extends SequentialTuning {
  guardrails: readonly (Guardrail & GuardrailCounts)[];
  /** Minimum tasks of the canary before it may be found not worse. */
  minimumTasks: number;
  /** Tasks the canary has run so far. */
  canaryTasks: number;
  /** Chance of rolling back a canary that is no worse on any guardrail (default 0.05). */
  alpha?: number;
}

export interface CanaryAnalysis {
  /** `worse` if any guardrail is, `not_worse` if all are, else `collecting` if any is, else `inconclusive`. */
  verdict: GuardrailVerdict;
  guardrails: GuardrailEvidence[];
}

/**
 * A canary against production on every guardrail of its policy. The policy's alpha is divided among the
 * guardrails (Bonferroni), since one worse guardrail is enough to roll back; promotion needs every
 * guardrail not worse, which needs no division, but each guardrail keeps one interval for both questions.
 */
export function analyzeCanary(input: CanaryAnalysisInput): CanaryAnalysis {
  const alpha = input.alpha ?? DEFAULT_ALPHA;
  assertAlpha(alpha);
  const count = input.guardrails.length;
  if (count === 0) throw new RangeError('a canary analysis needs at least one guardrail');
  const guardrails = input.guardrails.map((guardrail) =>
    compareGuardrail({
      ...guardrail,
      minimumTasks: input.minimumTasks,
      canaryTasks: input.canaryTasks,
      alpha: alpha / count,
      expectedObservations: input.expectedObservations,
    }),
  );
  const verdicts = new Set(guardrails.map((g) => g.verdict));
  let verdict: GuardrailVerdict;
  if (verdicts.has('worse')) verdict = 'worse';
  else if (verdicts.size === 1 && verdicts.has('not_worse')) verdict = 'not_worse';
  else if (verdicts.has('collecting')) verdict = 'collecting';
  else verdict = 'inconclusive';
  return { verdict, guardrails };
}
