import type { Interval } from './intervals.js';
import { restrictedRates } from './restricted-rates.js';
import { assertVariantCounts, type VariantCounts } from './statistics.js';

/**
 * Always-valid inference for the difference of two completion rates (treatment - control): the asymptotic
 * confidence sequence of Waudby-Smith, Arnold, Wu and Ramdas, "Time-uniform central limit theory and
 * asymptotic confidence sequences" (Annals of Statistics, 2024), in the two-sample form GrowthBook uses, which
 * is Robbins' normal mixture and the mixture sequential probability ratio test (mSPRT) of Johari, Koomen,
 * Pekelis and Walsh, "Always valid inference: continuous monitoring of A/B tests" (Operations Research, 2022).
 *
 * With n = n_c + n_t observations, the observed difference d and, for a hypothesised difference delta,
 *   z(delta) = (d - delta) / sqrt(V(delta)),  V(delta) = p_t(1 - p_t)/n_t + p_c(1 - p_c)/n_c
 * where p_t, p_c are the most likely rates whose difference is delta (`restrictedRates`; at delta = 0 the
 * pooled rate, so z(0) is the fixed-horizon test's z), and r = n * rho^2:
 *   mixture likelihood ratio   L(delta) = (1 + r)^(-1/2) * exp(r/(1 + r) * z(delta)^2 / 2),
 *   always-valid p-value       p(delta) = min(1, 1 / L(delta)),
 *   confidence sequence        { delta : L(delta) < 1/alpha } = { delta : |z(delta)| < c },
 *                              c = sqrt((1 + r)/r * (log(1 + r) - 2 log alpha)), an interval around d.
 * Ville's inequality bounds by alpha the chance that L(true difference) ever reaches 1/alpha, which is what
 * makes looking after every batch safe. The papers' variance is the plug-in p(1 - p) of the observed rates;
 * the theory only asks for a variance estimate that is consistent when delta is the true difference, which
 * the restricted one is. It keeps a low rate's skew from pushing one-sided errors past alpha (the plug-in,
 * even with one success and one failure added, let 5.5% of canaries failing exactly at their tolerance pass
 * at alpha 0.05 in our simulation; docs/decisions/0020-sequential-ab-analysis.md), and it is not 0 where the
 * bare plug-in is (0 of 3 against 3 of 3 would look certain).
 */

/** Total observations (control plus treatment) at which the confidence sequence is tuned to be narrowest. */
export const DEFAULT_EXPECTED_OBSERVATIONS = 5_000;

export interface SequentialTuning {
  /**
   * Total observations of one comparison (control plus treatment) at which its confidence sequence is
   * narrowest. The sequence stays valid whatever the value; a value near the real sample size only makes
   * it narrower there. Default 5,000.
   */
  expectedObservations?: number;
}

export function assertAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 1)) {
    throw new RangeError(`alpha must lie strictly between 0 and 1, got ${alpha}`);
  }
}

function assertExpectedObservations(expected: number): void {
  if (!(Number.isFinite(expected) && expected > 0)) {
    throw new RangeError(`expectedObservations must be a positive number, got ${expected}`);
  }
}

/**
 * rho^2 that makes the boundary narrowest after `expectedObservations` observations, from Howard, Ramdas,
 * McAuliffe and Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences" (Annals of
 * Statistics, 2021): rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / n*, a closed-form approximation of the
 * r = n* rho^2 that solves r = log(1 + r) - 2 log alpha, where the interval's width stops shrinking in r.
 */
export function mixtureRhoSquared(
  alpha: number,
  expectedObservations = DEFAULT_EXPECTED_OBSERVATIONS,
): number {
  assertAlpha(alpha);
  assertExpectedObservations(expectedObservations);
  const twiceLogInverseAlpha = -2 * Math.log(alpha);
  return (twiceLogInverseAlpha + Math.log(twiceLogInverseAlpha + 1)) / expectedObservations;
}

/** Two variants' counts for a comparison, both with observations (null otherwise). */
export interface Comparable {
  control: VariantCounts;
  treatment: VariantCounts;
  /** treatment rate - control rate */
  difference: number;
}

export function comparable(control: VariantCounts, treatment: VariantCounts): Comparable | null {
  assertVariantCounts(control);
  assertVariantCounts(treatment);
  if (control.observations === 0 || treatment.observations === 0) return null;
  const difference = treatment.successes / treatment.observations - control.successes / control.observations;
  return { control, treatment, difference };
}

/** z(delta): the difference's distance from delta in standard errors estimated under delta. */
function zScore(pair: Comparable, delta: number): number {
  const { control, treatment } = pair;
  const rates = restrictedRates(control, treatment, delta);
  const variance =
    (rates.treatment * (1 - rates.treatment)) / treatment.observations +
    (rates.control * (1 - rates.control)) / control.observations;
  const deviation = pair.difference - delta;
  // Zero variance comes with data that fit delta exactly (all or none converted, delta 0), or with delta at
  // -1 or 1, where it is the right answer: no other data than these could have such a difference.
  return deviation === 0 ? 0 : deviation / Math.sqrt(variance);
}

const mixtureWeight = (pair: Comparable, rhoSquared: number) =>
  (pair.control.observations + pair.treatment.observations) * rhoSquared;

/** Always-valid p-value of the hypothesis "the difference is `delta`" (0 by default: no difference). */
export function alwaysValidPValue(pair: Comparable, rhoSquared: number, delta = 0): number {
  const r = mixtureWeight(pair, rhoSquared);
  const z = zScore(pair, delta);
  const logLikelihoodRatio = (r / (1 + r)) * ((z * z) / 2) - Math.log1p(r) / 2;
  return Math.min(1, Math.exp(-logLikelihoodRatio));
}

/**
 * The |z| at which L reaches 1/alpha: c = sqrt((1 + r)/r * (log(1 + r) - 2 log alpha)). It grows with the
 * observations (slowly, as log n) where a fixed-horizon test's stays at 1.96.
 */
export function criticalZ(pair: Comparable, rhoSquared: number, alpha: number): number {
  assertAlpha(alpha);
  const r = mixtureWeight(pair, rhoSquared);
  return Math.sqrt(((1 + r) / r) * (Math.log1p(r) - 2 * Math.log(alpha)));
}

const ROOT_PRECISION = 1e-15;

interface Point {
  x: number;
  excess: number;
}

/**
 * The root of `excess` between `inside` (excess < 0) and `outside` (excess >= 0, possibly infinite):
 * regula falsi with the Illinois modification (Dowell and Jarratt, 1971), which halves the value kept at a
 * bracket end that stays put, so that both ends close in; bisection while the outside value is infinite.
 */
function bracketedRoot(excess: (x: number) => number, inside: Point, outside: Point): number {
  let [a, fa, b, fb] = [inside.x, inside.excess, outside.x, outside.excess];
  let kept: 'a' | 'b' | null = null;
  for (let step = 0; step < 200 && Math.abs(b - a) > ROOT_PRECISION; step++) {
    const secant = (a * fb - b * fa) / (fb - fa);
    const x = Number.isFinite(fb) && secant !== a && secant !== b ? secant : (a + b) / 2;
    const fx = excess(x);
    if (fx === 0) return x;
    if (fx < 0) {
      [a, fa] = [x, fx];
      if (kept === 'b') fb /= 2;
      kept = 'b';
    } else {
      [b, fb] = [x, fx];
      if (kept === 'a') fa /= 2;
      kept = 'a';
    }
  }
  return a;
}

/** Standard error of the observed difference from the observed rates (the plug-in, Wald's). */
function plugInStandardError({ control, treatment }: Comparable): number {
  const c = control.successes / control.observations;
  const t = treatment.successes / treatment.observations;
  return Math.sqrt((c * (1 - c)) / control.observations + (t * (1 - t)) / treatment.observations);
}

/**
 * The confidence sequence's interval at level 1 - alpha for the current counts: every difference delta in
 * [-1, 1] with |z(delta)| < c. `rhoSquared` must be the one the p-value uses for the two to agree.
 */
export function confidenceSequence(pair: Comparable, rhoSquared: number, alpha: number): Interval {
  const critical = criticalZ(pair, rhoSquared, alpha);
  const excess = (delta: number) => Math.abs(zScore(pair, delta)) - critical;
  // z is 0 at the observed difference, which the interval therefore always holds.
  const observed = { x: pair.difference, excess: -critical };
  const standardError = plugInStandardError(pair);
  const bound = (end: -1 | 1): number => {
    // Wald's bound d +- c * se is close to the root and splits the search in two.
    const wald = pair.difference + end * critical * standardError;
    let inside = observed;
    if (standardError > 0 && Math.abs(wald) < 1) {
      const guess = { x: wald, excess: excess(wald) };
      if (guess.excess >= 0) return bracketedRoot(excess, observed, guess);
      inside = guess;
    }
    const outside = { x: end, excess: excess(end) };
    return outside.excess < 0 ? end : bracketedRoot(excess, inside, outside);
  };
  return { lower: bound(-1), upper: bound(1) };
}
