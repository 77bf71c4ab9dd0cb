import erfc from '@stdlib/math-base-special-erfc';
import gammainc from '@stdlib/math-base-special-gammainc';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';

/** Survival function P(X >= x) of the chi-squared distribution with `df` degrees of freedom. */
export function chiSquaredSurvival(x: number, df: number): number {
  if (x <= 0) return 1;
  return gammainc(x / 2, df / 2, true, true);
}

/** Two-sided p-value P(|Z| >= |z|) of the standard normal distribution. */
export function twoSidedNormalPValue(z: number): number {
  return erfc(Math.abs(z) / Math.SQRT2);
}

/** The critical value z with P(|Z| <= z) = confidence. */
export function twoSidedCriticalValue(confidence: number): number {
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`confidence must lie strictly between 0 and 1, got ${confidence}`);
  }
  return normalQuantile(1 - (1 - confidence) / 2, 0, 1);
}
