import { twoSidedCriticalValue } from './distributions.js';
import { assertVariantCounts, type VariantCounts } from './statistics.js';

export interface Interval {
  lower: number;
  upper: number;
}

export interface RelativeLift {
  /** (p_t - p_c) / p_c */
  lift: number;
  /** Null when the treatment has no successes, where the log risk ratio has no finite variance. */
  lower: number | null;
  upper: number | null;
}

/** Wilson score interval for a binomial proportion; null without observations. */
export function wilsonInterval(successes: number, observations: number, confidence = 0.95): Interval | null {
  assertVariantCounts({ observations, successes });
  const z = twoSidedCriticalValue(confidence);
  if (observations === 0) return null;
  const n = observations;
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const halfWidth = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return {
    lower: successes === 0 ? 0 : Math.max(0, centre - halfWidth),
    upper: successes === n ? 1 : Math.min(1, centre + halfWidth),
  };
}

/**
 * Relative lift of the treatment over the control, (p_t - p_c) / p_c, with a confidence interval from the
 * delta method on the log of the risk ratio (Katz): Var(log RR) = 1/s_t - 1/n_t + 1/s_c - 1/n_c, and the
 * interval exp(log RR +- z * SE) - 1. The interval is asymmetric around the lift and never below -1.
 * Null when either variant has no observations or the control has no successes.
 */
export function relativeLift(
  control: VariantCounts,
  treatment: VariantCounts,
  confidence = 0.95,
): RelativeLift | null {
  assertVariantCounts(control);
  assertVariantCounts(treatment);
  const z = twoSidedCriticalValue(confidence);
  const { observations: nc, successes: sc } = control;
  const { observations: nt, successes: st } = treatment;
  if (nc === 0 || nt === 0 || sc === 0) return null;
  const lift = (st * nc - sc * nt) / (nt * sc);
  if (st === 0) return { lift, lower: null, upper: null };
  const logRiskRatio = Math.log((st * nc) / (nt * sc));
  const standardError = Math.sqrt(Math.max(0, 1 / st - 1 / nt + 1 / sc - 1 / nc));
  return {
    lift,
    lower: Math.expm1(logRiskRatio - z * standardError),
    upper: Math.expm1(logRiskRatio + z * standardError),
  };
}
