import { weightShares } from './assignment.js';
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
  const shares = weightShares(weights);
  if (total === 0 || observations.length < 2) return { statistic: null, pValue: null, mismatch: false };
  let statistic = 0;
  for (const [i, n] of observations.entries()) {
    const expected = total * (shares[i] ?? 0);
    // A share too small to expect anyone leaves the test undefined, not infinite.
    if (!(expected > 0)) return { statistic: null, pValue: null, mismatch: false };
    statistic += (n - expected) ** 2 / expected;
  }
  const pValue = chiSquaredSurvival(statistic, observations.length - 1);
  if (!Number.isFinite(statistic) || !Number.isFinite(pValue)) {
    return { statistic: null, pValue: null, mismatch: false };
  }
  return { statistic, pValue, mismatch: pValue < SRM_ALPHA };
}
