import {
  alwaysValidPValue,
  assertAlpha,
  comparable,
  confidenceSequence,
  DEFAULT_EXPECTED_OBSERVATIONS,
  mixtureRhoSquared,
  type SequentialTuning,
} from './confidence-sequence.js';
import type { Interval } from './intervals.js';
import { DEFAULT_ALPHA, type VariantCounts } from './statistics.js';

/**
 * - `collecting`: no difference shown yet; looking again later is safe.
 * - `significant`: the difference from the control is shown, at the test's alpha, whenever it was looked at.
 * - `not_significant`: the test ended without the difference being shown.
 */
export type SequentialDecision = 'collecting' | 'significant' | 'not_significant';

/**
 * What a caller may store between looks to report monotone figures: the smallest p-value and the
 * intersection of the intervals seen so far. Plain JSON. Optional: the figures from the counts alone are
 * valid at every look too, they only need not move in one direction.
 */
export interface SequentialState {
  /** Observations of the comparison (control plus treatment) at the last look; they only grow. */
  observations: number;
  /** Smallest always-valid p-value seen. */
  alwaysValidPValue: number;
  /** Running intersection of the confidence sequence's intervals. */
  lower: number;
  upper: number;
}

export interface SequentialComparisonInput extends SequentialTuning {
  control: VariantCounts;
  treatment: VariantCounts;
  /** Error rate of this comparison (default 0.05); `compareWithControlSequentially` divides the test's. */
  alpha?: number;
  /** The state returned by the previous look at this comparison, if the caller kept it. */
  previous?: SequentialState | null;
  /** The test has ended: a comparison that has not become significant is then not significant. */
  ended?: boolean;
}

export interface SequentialComparison {
  /** treatment rate - control rate; null while a variant has no observations. */
  difference: number | null;
  /** Running minimum when `previous` was given. */
  alwaysValidPValue: number | null;
  /** Interval of the difference at `confidence`; the running intersection when `previous` was given. */
  confidenceSequence: Interval | null;
  /** 1 - alpha of this comparison. */
  confidence: number;
  decision: SequentialDecision;
  /** To store and pass back as `previous` at the next look; null while the difference is undefined. */
  state: SequentialState | null;
}

function assertState(state: SequentialState, observations: number): void {
  if (
    !(state.observations <= observations) ||
    !(state.alwaysValidPValue >= 0 && state.alwaysValidPValue <= 1) ||
    !(state.lower <= state.upper)
  ) {
    throw new RangeError(
      `the previous state (${JSON.stringify(state)}) does not belong to a comparison with ${observations} observations`,
    );
  }
}

/**
 * The next state from the previous one and this look's figures. The intervals all hold the true difference
 * at once (with probability 1 - alpha), so their intersection does too. Intervals that do not overlap
 * contradict a fixed difference (the rates moved during the test): the intersection then starts again from
 * this look's interval rather than report an empty one.
 */
function nextState(
  previous: SequentialState | null | undefined,
  observations: number,
  pValue: number,
  interval: Interval,
): SequentialState {
  if (!previous) return { observations, alwaysValidPValue: pValue, ...interval };
  assertState(previous, observations);
  const lower = Math.max(previous.lower, interval.lower);
  const upper = Math.min(previous.upper, interval.upper);
  const overlap = lower <= upper;
  return {
    observations,
    alwaysValidPValue: Math.min(previous.alwaysValidPValue, pValue),
    lower: overlap ? lower : interval.lower,
    upper: overlap ? upper : interval.upper,
  };
}

/**
 * Always-valid comparison of a treatment's completion rate with the control's, from the two variants'
 * counts alone (constant time): significant once the always-valid p-value is at most alpha, which is when
 * the confidence sequence leaves out 0. See `confidence-sequence.ts` for the method.
 */
export function sequentialComparison(input: SequentialComparisonInput): SequentialComparison {
  const alpha = input.alpha ?? DEFAULT_ALPHA;
  assertAlpha(alpha);
  const rhoSquared = mixtureRhoSquared(alpha, input.expectedObservations ?? DEFAULT_EXPECTED_OBSERVATIONS);
  const pair = comparable(input.control, input.treatment);
  if (pair === null) {
    return {
      difference: null,
      alwaysValidPValue: null,
      confidenceSequence: null,
      confidence: 1 - alpha,
      decision: input.ended ? 'not_significant' : 'collecting',
      state: null,
    };
  }
  const state = nextState(
    input.previous,
    input.control.observations + input.treatment.observations,
    alwaysValidPValue(pair, rhoSquared),
    confidenceSequence(pair, rhoSquared, alpha),
  );
  const significant = state.alwaysValidPValue <= alpha;
  return {
    difference: pair.difference,
    alwaysValidPValue: state.alwaysValidPValue,
    confidenceSequence: { lower: state.lower, upper: state.upper },
    confidence: 1 - alpha,
    decision: significant ? 'significant' : input.ended ? 'not_significant' : 'collecting',
    state,
  };
}

export interface SequentialControlComparison extends SequentialComparison {
  /** Bonferroni: min(1, p * number of comparisons); significant when at most the test's alpha. */
  adjustedPValue: number | null;
}

export interface SequentialFamilyOptions extends SequentialTuning {
  /** The test's alpha (default 0.05), shared among its comparisons with the control. */
  alpha?: number;
  /** One stored state per non-control variant, in order, as returned by the previous look. */
  previous?: readonly (SequentialState | null)[];
  ended?: boolean;
}

/**
 * Every non-control variant against the control (the first variant), one entry per non-control variant in
 * order. With m comparisons each runs at alpha / m (Bonferroni), so the chance that any of them is ever
 * wrongly significant stays at most alpha, and each interval is at level 1 - alpha / m: all of them hold at
 * once. Holm's step-down, which the fixed-horizon comparisons use, has no intervals to go with it.
 */
export function compareWithControlSequentially(
  variants: readonly VariantCounts[],
  options: SequentialFamilyOptions = {},
): SequentialControlComparison[] {
  const alpha = options.alpha ?? DEFAULT_ALPHA;
  assertAlpha(alpha);
  const [control, ...treatments] = variants;
  if (control === undefined) return [];
  const comparisons = treatments.length;
  return treatments.map((treatment, index) => {
    const comparison = sequentialComparison({
      control,
      treatment,
      alpha: alpha / comparisons,
      expectedObservations: options.expectedObservations,
      previous: options.previous?.[index] ?? null,
      ended: options.ended,
    });
    const p = comparison.alwaysValidPValue;
    return { ...comparison, adjustedPValue: p === null ? null : Math.min(1, p * comparisons) };
  });
}
