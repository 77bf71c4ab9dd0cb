import type { VariantCounts } from './statistics.js';

export interface RatePair {
  control: number;
  treatment: number;
}

const clampRate = (rate: number) => Math.min(1, Math.max(0, rate));

/**
 * The maximum-likelihood completion rates of two variants under the hypothesis that the treatment's rate
 * exceeds the control's by `difference`: the closed-form root of the likelihood equation's cubic given by
 * Farrington and Manning, "Test statistics and sample size formulae for comparative binomial trials with null
 * hypothesis of non-zero risk difference or non-unity relative risk" (Statistics in Medicine, 1990), after
 * Miettinen and Nurminen (1985). At a difference of 0 they are both the pooled rate. Both variants need
 * observations; `difference` lies in [-1, 1].
 */
export function restrictedRates(
  control: VariantCounts,
  treatment: VariantCounts,
  difference: number,
): RatePair {
  const d = difference;
  const treatmentRate = treatment.successes / treatment.observations;
  const controlRate = control.successes / control.observations;
  const ratio = control.observations / treatment.observations;
  // a x^3 + b x^2 + c x + e = 0 in the treatment's rate x, solved by the trigonometric method.
  const a = 1 + ratio;
  const b = -(1 + ratio + treatmentRate + ratio * controlRate + d * (ratio + 2));
  const c = d * d + d * (2 * treatmentRate + ratio + 1) + treatmentRate + ratio * controlRate;
  const e = -treatmentRate * d * (1 + d);
  const v = (b * b * b) / (27 * a * a * a) - (b * c) / (6 * a * a) + e / (2 * a);
  const u = Math.sign(v) * Math.sqrt(Math.max(0, (b * b) / (9 * a * a) - c / (3 * a)));
  // u = 0 is a triple root at -b / 3a, where cos(w) = 0 leaves exactly that.
  const w = u === 0 ? Math.PI / 2 : (Math.PI + Math.acos(Math.min(1, Math.max(-1, v / (u * u * u))))) / 3;
  const treatmentRestricted = clampRate(2 * u * Math.cos(w) - b / (3 * a));
  return { treatment: treatmentRestricted, control: clampRate(treatmentRestricted - d) };
}
