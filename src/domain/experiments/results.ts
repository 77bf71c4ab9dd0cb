import { type Interval, type RelativeLift, relativeLift, wilsonInterval } from './intervals.js';
import {
  compareWithControlSequentially,
  type SequentialControlComparison,
  type SequentialDecision,
  type SequentialState,
} from './sequential.js';
import { type SampleRatioMismatch, SRM_ALPHA, sampleRatioMismatch } from './srm.js';
import {
  compareWithControl,
  completionRate,
  type SignificanceMethod,
  testSignificance,
  type VariantCounts,
} from './statistics.js';

/** Confidence of the per-variant intervals and of the lift intervals. */
export const INTERVAL_CONFIDENCE = 0.95;

/**
 * Which analysis decides a test: `fixed_horizon`, the z-test (chi-squared for more variants) read once at
 * a planned size, or `sequential`, the always-valid analysis that may be read at every look. Both are
 * computed for every test; this says which one its owner chose to act on.
 */
export const AB_TEST_ANALYSES = ['fixed_horizon', 'sequential'] as const;
export type AbTestAnalysis = (typeof AB_TEST_ANALYSES)[number];
export const DEFAULT_AB_TEST_ANALYSIS: AbTestAnalysis = 'fixed_horizon';

/** One variant's always-valid comparison with the control (see sequential.ts). */
export interface SequentialVariantResult {
  /** This variant's completion rate minus the control's; null while either has no observations. */
  difference: number | null;
  /** Always-valid p-value of "no difference", at this comparison's share of alpha; null with the difference. */
  alwaysValidPValue: number | null;
  /** Bonferroni: min(1, p * comparisons); the comparison is significant when it is at most alpha. */
  adjustedPValue: number | null;
  /** The confidence sequence of the difference at `confidence`; null with the difference. */
  confidenceSequence: Interval | null;
  /** 1 - alpha / comparisons: every variant's interval holds at once with probability 1 - alpha. */
  confidence: number;
  decision: SequentialDecision;
}

export interface VariantTally {
  id: string;
  name: string;
  weight: number;
  observations: number;
  successes: number;
}

export interface VariantResult {
  variantId: string;
  name: string;
  isControl: boolean;
  weight: number;
  observations: number;
  successes: number;
  completionRate: number;
  /** Wilson interval of the completion rate; null without observations. */
  completionRateCi: Interval | null;
  /** Relative lift over the control; null for the control itself and where it is undefined. */
  lift: RelativeLift | null;
  /** Always-valid comparison with the control; null for the control itself. */
  sequential: SequentialVariantResult | null;
}

export interface PairwiseComparison {
  variantId: string;
  name: string;
  pValue: number | null;
  adjustedPValue: number | null;
  significant: boolean;
  smallSample: boolean;
  exactPValue: number | null;
}

export interface ExperimentResults {
  alpha: number;
  analysis: AbTestAnalysis;
  /**
   * The sequential analysis's decision for the test: `significant` once some variant's comparison is,
   * `not_significant` when the test ended without one, `collecting` until then.
   */
  sequentialDecision: SequentialDecision;
  significant: boolean;
  chiSquaredPValue: number | null;
  method: SignificanceMethod;
  statistic: number | null;
  degreesOfFreedom: number;
  minExpectedCount: number | null;
  smallSample: boolean;
  exactPValue: number | null;
  variants: VariantResult[];
  sampleRatioMismatch: SampleRatioMismatch & { alpha: number };
  pairwise: PairwiseComparison[];
}

export interface SummaryOptions {
  /** Default `fixed_horizon`. */
  analysis?: AbTestAnalysis;
  /** The test is completed: a sequential comparison not yet significant is then not significant. */
  ended?: boolean;
  /** The sequential state stored with the test (JSON, checked by `storedSequentialState`), if any. */
  storedState?: unknown;
}

const isState = (value: unknown): value is SequentialState => {
  const state = value as SequentialState | null;
  return (
    typeof state === 'object' &&
    state !== null &&
    Number.isSafeInteger(state.observations) &&
    typeof state.alwaysValidPValue === 'number' &&
    state.alwaysValidPValue >= 0 &&
    state.alwaysValidPValue <= 1 &&
    typeof state.lower === 'number' &&
    typeof state.upper === 'number' &&
    state.lower <= state.upper
  );
};

/**
 * The sequential state stored with a test (JSON, one entry per non-control variant), checked against the
 * variants' counts: an entry that does not fit them (more observations than the comparison has, or not a
 * state at all) is dropped, so a stored value can only ever narrow valid figures, never fail a read.
 */
export function storedSequentialState(
  stored: unknown,
  variants: readonly VariantCounts[],
): (SequentialState | null)[] | null {
  if (!Array.isArray(stored) || stored.length !== variants.length - 1) return null;
  const [control] = variants;
  return stored.map((state: unknown, index) => {
    const treatment = variants[index + 1];
    if (!control || !treatment || !isState(state)) return null;
    return state.observations <= control.observations + treatment.observations ? state : null;
  });
}

/**
 * The always-valid comparisons of a test with its stored state, and the state to store after this look:
 * the smallest p-value and the intersection of the intervals seen at every look stored so far.
 */
export function sequentialLook(
  variants: readonly VariantCounts[],
  alpha: number,
  options: Pick<SummaryOptions, 'ended' | 'storedState'> = {},
): { comparisons: SequentialControlComparison[]; state: (SequentialState | null)[] } {
  const comparisons = compareWithControlSequentially(variants, {
    alpha,
    ended: options.ended ?? false,
    previous: storedSequentialState(options.storedState, variants) ?? undefined,
  });
  return { comparisons, state: comparisons.map((comparison) => comparison.state) };
}

/**
 * The results of an experiment from its per-variant counters, control first: the significance decision
 * at the test's alpha with its small-sample warning, per-variant Wilson intervals, lifts over the control, a sample-ratio check against
 * the weights, Holm-adjusted comparisons of every other variant with the control, and the always-valid
 * (sequential) comparison of every other variant with the control with its decision. Constant time per
 * variant.
 */
export function summarizeExperiment(
  variants: readonly VariantTally[],
  alpha: number,
  options: SummaryOptions = {},
): ExperimentResults {
  const significance = testSignificance(variants, alpha);
  const [control] = variants;
  const comparisons = compareWithControl(variants, alpha);
  const ended = options.ended ?? false;
  const sequential = sequentialLook(variants, alpha, options).comparisons;
  const sequentialDecision: SequentialDecision = sequential.some((c) => c.decision === 'significant')
    ? 'significant'
    : ended
      ? 'not_significant'
      : 'collecting';
  return {
    alpha,
    analysis: options.analysis ?? DEFAULT_AB_TEST_ANALYSIS,
    sequentialDecision,
    significant: significance.significant,
    chiSquaredPValue: significance.pValue,
    method: significance.method,
    statistic: significance.statistic,
    degreesOfFreedom: significance.degreesOfFreedom,
    minExpectedCount: significance.minExpectedCount,
    smallSample: significance.smallSample,
    exactPValue: significance.exactPValue,
    variants: variants.map((variant, index) => ({
      variantId: variant.id,
      name: variant.name,
      isControl: index === 0,
      weight: variant.weight,
      observations: variant.observations,
      successes: variant.successes,
      completionRate: completionRate(variant),
      completionRateCi: wilsonInterval(variant.successes, variant.observations, INTERVAL_CONFIDENCE),
      lift: index === 0 || !control ? null : relativeLift(control, variant, INTERVAL_CONFIDENCE),
      sequential: sequentialResult(sequential[index - 1]),
    })),
    sampleRatioMismatch: {
      ...sampleRatioMismatch(
        variants.map((variant) => variant.observations),
        variants.map((variant) => variant.weight),
      ),
      alpha: SRM_ALPHA,
    },
    pairwise: variants.slice(1).map((variant, index) => {
      const comparison = comparisons[index];
      return {
        variantId: variant.id,
        name: variant.name,
        pValue: comparison?.pValue ?? null,
        adjustedPValue: comparison?.adjustedPValue ?? null,
        significant: comparison?.significant ?? false,
        smallSample: comparison?.smallSample ?? false,
        exactPValue: comparison?.exactPValue ?? null,
      };
    }),
  };
}

function sequentialResult(
  comparison: SequentialControlComparison | undefined,
): SequentialVariantResult | null {
  if (!comparison) return null;
  return {
    difference: comparison.difference,
    alwaysValidPValue: comparison.alwaysValidPValue,
    adjustedPValue: comparison.adjustedPValue,
    confidenceSequence: comparison.confidenceSequence,
    confidence: comparison.confidence,
    decision: comparison.decision,
  };
}
