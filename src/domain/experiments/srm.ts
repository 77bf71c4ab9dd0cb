import { chiSquaredSurvival } from './distributions.js';

export const SRM_ALPHA = 0.001;

export interface SampleRatioMismatch {
  statistic: number | null;
  pValue: number | null;
  mismatch: boolean;
}

/**
 * Chi-squared goodness of fit of the observation counts against the split the variant weights call for.
 * Weights are relative and need not sum to 1. The p-value is null without observations or with fewer than
 * two variants; a mismatch is flagged when p < 0.001.
 */
export function sampleRatioMismatch(
  observations: readonly number[],
  weights: readonly number[],
): SampleRatioMismatch {
  if (observations.length !== weights.length) {
    throw new RangeError(`expected one weight per variant, got ${weights.length} for ${observations.length}`);
  }
  let total = 0;
  for (const n of observations) {
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new RangeError(`observations must be non-negative integers, got ${n}`);
    }
    total += n;
  }
  let weightTotal = 0;
  for (const w of weights) {
    if (!(Number.isFinite(w) && w > 0)) throw new RangeError(`weights must be positive, got ${w}`);
    weightTotal += w;
  }
  if (total === 0 || observations.length < 2) return { statistic: null, pValue: null, mismatch: false };
  let statistic = 0;
  observations.forEach((n, i) => {
    const expected = (total * (weights[i] ?? 0)) / weightTotal;
    statistic += (n - expected) ** 2 / expected;
  });
  const pValue = chiSquaredSurvival(statistic, observations.length - 1);
  return { statistic, pValue, mismatch: pValue < SRM_ALPHA };
}
