import { chiSquaredSurvival, twoSidedNormalPValue } from './distributions.js';
import { fisherExactPValue } from './fisher.js';

export interface VariantCounts {
  /** Subjects exposed to the variant. */
  observations: number;
  /** Exposed subjects that converted. */
  successes: number;
}

export type SignificanceMethod = 'two_proportion_z' | 'chi_squared_homogeneity';

export interface SignificanceResult {
  method: SignificanceMethod;
  /** The z score (treatment minus control) for two variants, the chi-squared statistic otherwise. */
  statistic: number | null;
  degreesOfFreedom: number;
  pValue: number | null;
  /** Smallest expected cell count of the 2xk table; null when the test is undefined. */
  minExpectedCount: number | null;
  /** pValue < alpha: the test's own decision, whatever the size of the sample. */
  significant: boolean;
  /**
   * A warning beside the decision: some expected cell count is below MIN_EXPECTED_COUNT, where the normal
   * (chi-squared) approximation behind pValue is rough.
   */
  smallSample: boolean;
  /** With a small sample of two variants, Fisher's exact test (two-sided) on the 2x2 table; else null. */
  exactPValue: number | null;
}

export interface ControlComparison {
  pValue: number | null;
  /** Holm-adjusted over the comparisons whose p-value is defined. */
  adjustedPValue: number | null;
  /** adjustedPValue < alpha. */
  significant: boolean;
  /** Some expected cell count of the pair's 2x2 table is below MIN_EXPECTED_COUNT. */
  smallSample: boolean;
  /** With a small sample, Fisher's exact test (two-sided) on the pair's table, unadjusted; else null. */
  exactPValue: number | null;
}

export const DEFAULT_ALPHA = 0.05;
export const MIN_EXPECTED_COUNT = 5;

export function assertVariantCounts(v: VariantCounts): void {
  const { observations, successes } = v;
  if (!Number.isSafeInteger(observations) || observations < 0) {
    throw new RangeError(`observations must be a non-negative integer, got ${observations}`);
  }
  if (!Number.isSafeInteger(successes) || successes < 0 || successes > observations) {
    throw new RangeError(`successes must be an integer between 0 and observations, got ${successes}`);
  }
}

function assertAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`alpha must lie strictly between 0 and 1, got ${alpha}`);
}

export function completionRate(v: VariantCounts): number {
  return v.observations === 0 ? 0 : v.successes / v.observations;
}

interface TableTest {
  statistic: number;
  pValue: number;
  minExpectedCount: number;
}

/**
 * A 2xk table with a zero margin has zero expected cells, for which the test statistic is undefined.
 */
function margins(variants: readonly VariantCounts[]): { total: number; successes: number } | null {
  let total = 0;
  let successes = 0;
  for (const v of variants) {
    if (v.observations === 0) return null;
    total += v.observations;
    successes += v.successes;
  }
  if (successes === 0 || successes === total) return null;
  return { total, successes };
}

function minExpected(variants: readonly VariantCounts[], total: number, successes: number): number {
  const smallestColumn = Math.min(...variants.map((v) => v.observations));
  return (smallestColumn * Math.min(successes, total - successes)) / total;
}

// Both cells of a column deviate from expectation by the same amount d/N with d = s*N - n*S, which gives
// the closed form sum d^2 / (n*S*F); it avoids the cancellation of subtracting nearly equal expected counts.
function chiSquaredHomogeneity(variants: readonly VariantCounts[]): TableTest | null {
  const m = margins(variants);
  if (m === null) return null;
  const failures = m.total - m.successes;
  let statistic = 0;
  for (const v of variants) {
    const d = v.successes * m.total - v.observations * m.successes;
    statistic += (d * d) / (v.observations * m.successes * failures);
  }
  return {
    statistic,
    pValue: chiSquaredSurvival(statistic, variants.length - 1),
    minExpectedCount: minExpected(variants, m.total, m.successes),
  };
}

/** Pooled two-proportion z-test; z is positive when the treatment converts better than the control. */
function twoProportionZ(control: VariantCounts, treatment: VariantCounts): TableTest | null {
  const pair = [control, treatment];
  const m = margins(pair);
  if (m === null) return null;
  const failures = m.total - m.successes;
  const numerator = treatment.successes * control.observations - control.successes * treatment.observations;
  const z =
    numerator / Math.sqrt((control.observations * treatment.observations * m.successes * failures) / m.total);
  return {
    statistic: z,
    pValue: twoSidedNormalPValue(z),
    minExpectedCount: minExpected(pair, m.total, m.successes),
  };
}

const isSmallSample = (test: TableTest | null) => test !== null && test.minExpectedCount < MIN_EXPECTED_COUNT;

/** Fisher's exact test beside a small sample of two variants. */
const exactBeside = (test: TableTest | null, pair: readonly VariantCounts[]) => {
  const [control, treatment] = pair;
  if (!isSmallSample(test) || pair.length !== 2 || !control || !treatment) return null;
  return fisherExactPValue(control, treatment);
};

/**
 * Tests whether the completion rates of the variants differ: a two-sided pooled two-proportion z-test for
 * two variants (identical p-value to the uncorrected chi-squared test on the 2x2 table), the chi-squared
 * test of homogeneity on the 2xk table otherwise. Fewer than two variants give an undefined test. The
 * decision is p < alpha; an expected cell count below 5 only raises `smallSample` beside it (with
 * Fisher's exact test for two variants), so the decision stays the one the test gives.
 */
export function testSignificance(
  variants: readonly VariantCounts[],
  alpha = DEFAULT_ALPHA,
): SignificanceResult {
  assertAlpha(alpha);
  variants.forEach(assertVariantCounts);
  const [control, treatment] = variants;
  if (variants.length === 2 && control !== undefined && treatment !== undefined) {
    const test = twoProportionZ(control, treatment);
    return toResult('two_proportion_z', 1, test, alpha, variants);
  }
  const test = variants.length < 2 ? null : chiSquaredHomogeneity(variants);
  return toResult('chi_squared_homogeneity', Math.max(variants.length - 1, 0), test, alpha, variants);
}

function toResult(
  method: SignificanceMethod,
  degreesOfFreedom: number,
  test: TableTest | null,
  alpha: number,
  variants: readonly VariantCounts[],
): SignificanceResult {
  return {
    method,
    statistic: test?.statistic ?? null,
    degreesOfFreedom,
    pValue: test?.pValue ?? null,
    minExpectedCount: test?.minExpectedCount ?? null,
    significant: test !== null && test.pValue < alpha,
    smallSample: isSmallSample(test),
    exactPValue: exactBeside(test, variants),
  };
}

/**
 * Holm's step-down adjustment for multiple comparisons. Null entries stay null and do not count towards
 * the size of the family.
 */
export function holmAdjust(pValues: readonly (number | null)[]): (number | null)[] {
  const defined: { index: number; p: number }[] = [];
  pValues.forEach((p, index) => {
    if (p === null) return;
    if (!(p >= 0 && p <= 1)) throw new RangeError(`p-values must lie between 0 and 1, got ${p}`);
    defined.push({ index, p });
  });
  defined.sort((a, b) => a.p - b.p);
  const adjusted: (number | null)[] = pValues.map(() => null);
  let runningMax = 0;
  defined.forEach(({ index, p }, rank) => {
    runningMax = Math.max(runningMax, Math.min(1, (defined.length - rank) * p));
    adjusted[index] = runningMax;
  });
  return adjusted;
}

/**
 * Two-proportion z-tests of each non-control variant against the control (the first variant), one entry
 * per non-control variant in order. Significance is the Holm-adjusted p-value below alpha; a small sample
 * of the pair's 2x2 table is a warning beside it, as in `testSignificance`.
 */
export function compareWithControl(
  variants: readonly VariantCounts[],
  alpha = DEFAULT_ALPHA,
): ControlComparison[] {
  assertAlpha(alpha);
  variants.forEach(assertVariantCounts);
  const [control, ...treatments] = variants;
  if (control === undefined) return [];
  const tests = treatments.map((treatment) => twoProportionZ(control, treatment));
  const adjusted = holmAdjust(tests.map((test) => test?.pValue ?? null));
  return tests.map((test, i) => {
    const adjustedPValue = adjusted[i] ?? null;
    return {
      pValue: test?.pValue ?? null,
      adjustedPValue,
      significant: adjustedPValue !== null && adjustedPValue < alpha,
      smallSample: isSmallSample(test),
      exactPValue: exactBeside(test, [control, treatments[i] as VariantCounts]),
    };
  });
}
