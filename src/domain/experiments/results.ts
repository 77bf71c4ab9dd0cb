import { type Interval, type RelativeLift, relativeLift, wilsonInterval } from './intervals.js';
import { type SampleRatioMismatch, SRM_ALPHA, sampleRatioMismatch } from './srm.js';
import {
  compareWithControl,
  completionRate,
  type SignificanceMethod,
  testSignificance,
} from './statistics.js';

/** Confidence of the per-variant intervals and of the lift intervals. */
export const INTERVAL_CONFIDENCE = 0.95;

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

/**
 * The results of an experiment from its per-variant counters, control first: the significance decision
 * at the test's alpha with its small-sample warning, per-variant Wilson intervals, lifts over the control, a sample-ratio check against
 * the weights, and Holm-adjusted comparisons of every other variant with the control.
 */
export function summarizeExperiment(variants: readonly VariantTally[], alpha: number): ExperimentResults {
  const significance = testSignificance(variants, alpha);
  const [control] = variants;
  const comparisons = compareWithControl(variants, alpha);
  return {
    alpha,
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
