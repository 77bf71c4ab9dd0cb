import { describe, expect, it } from 'vitest';
import { completionRate, testSignificance } from '../../../src/domain/experiments/index.js';
import { counts, expectClose, reference } from './reference.js';

const cases = reference.significance;

describe('completionRate', () => {
  it('divides successes by observations', () => {
    expect(completionRate(counts(200, 50))).toBe(0.25);
  });

  it('is 0 for a variant without observations', () => {
    expect(completionRate(counts(0, 0))).toBe(0);
  });
});

describe('testSignificance against SciPy', () => {
  it.each(cases)('matches the p-value for $name', (c) => {
    expectClose(testSignificance(c.variants).pValue, c.pValue);
  });

  it.each(cases)('matches the test statistic for $name', (c) => {
    expectClose(testSignificance(c.variants).statistic, c.statistic);
  });

  it.each(cases)('matches the smallest expected count for $name', (c) => {
    expectClose(testSignificance(c.variants).minExpectedCount, c.minExpectedCount);
  });

  it.each(cases)('reaches the same significance decision for $name', (c) => {
    expect(testSignificance(c.variants).significant).toBe(c.significant);
  });

  it.each(cases)('warns of a small sample alike for $name', (c) => {
    expect(testSignificance(c.variants).smallSample).toBe(c.smallSample);
  });

  it.each(cases)('matches the exact test beside a small sample for $name', (c) => {
    expectClose(testSignificance(c.variants).exactPValue, c.exactPValue);
  });

  it.each(cases)('uses the expected method and degrees of freedom for $name', (c) => {
    const result = testSignificance(c.variants);
    expect([result.method, result.degreesOfFreedom]).toEqual([c.method, c.degreesOfFreedom]);
  });
});

describe('testSignificance', () => {
  it('uses the two-proportion z-test for two variants', () => {
    expect(testSignificance([counts(100, 10), counts(100, 20)]).method).toBe('two_proportion_z');
  });

  it('uses the chi-squared test of homogeneity for three or more variants', () => {
    const result = testSignificance([counts(100, 10), counts(100, 20), counts(100, 30)]);
    expect(result.method).toBe('chi_squared_homogeneity');
  });

  it('gives a z statistic whose square is the uncorrected 2x2 chi-squared statistic', () => {
    const c = cases.find((x) => x.name === 'two variants, modest difference');
    const z = testSignificance(c?.variants ?? []).statistic ?? Number.NaN;
    expectClose(z * z, c?.chiSquared ?? null);
  });

  it('gives a positive z statistic when the treatment converts better than the control', () => {
    expect(testSignificance([counts(1000, 100), counts(1000, 150)]).statistic).toBeGreaterThan(0);
  });

  it('gives a negative z statistic when the treatment converts worse than the control', () => {
    expect(testSignificance([counts(1000, 150), counts(1000, 100)]).statistic).toBeLessThan(0);
  });

  it('resolves p-values far below 1e-20 instead of rounding them to zero', () => {
    const { pValue } = testSignificance([counts(20000, 2000), counts(20000, 2700)]);
    expect(pValue).toBeGreaterThan(0);
    expect(pValue).toBeLessThan(1e-20);
  });

  it('decides by the z-test alone when an expected count is below 5: 0/20 against 5/20 is significant', () => {
    const result = testSignificance([counts(20, 0), counts(20, 5)]);
    expect(result.pValue).toBeCloseTo(0.0168, 4);
    expect(result.minExpectedCount).toBe(2.5);
    expect(result.significant).toBe(true);
  });

  it('warns of a small sample beside the decision, with the exact test’s p-value', () => {
    const result = testSignificance([counts(20, 0), counts(20, 5)]);
    expect(result.smallSample).toBe(true);
    expect(result.exactPValue).toBeCloseTo(0.0471, 4);
  });

  it('keeps the decision of the z-test when the exact test disagrees', () => {
    const result = testSignificance([counts(12, 1), counts(9, 4)], 0.06);
    expect([result.significant, result.smallSample]).toEqual([true, true]);
    expect(result.exactPValue).toBeGreaterThan(0.06);
  });

  it('counts an expected count of exactly 5 as large enough: no warning, no exact test', () => {
    const result = testSignificance([counts(20, 10), counts(20, 0)]);
    expect(result.minExpectedCount).toBe(5);
    expect([result.significant, result.smallSample, result.exactPValue]).toEqual([true, false, null]);
  });

  it('warns of a small sample of three or more variants without an exact test', () => {
    const result = testSignificance([counts(10, 0), counts(10, 0), counts(10, 8)]);
    expect([result.significant, result.smallSample, result.exactPValue]).toEqual([true, true, null]);
  });

  it('is not significant when p equals alpha', () => {
    const { pValue } = testSignificance([counts(1000, 100), counts(1000, 120)]);
    expect(testSignificance([counts(1000, 100), counts(1000, 120)], pValue ?? 0).significant).toBe(false);
  });

  it('applies a custom alpha', () => {
    expect(testSignificance([counts(1000, 100), counts(1000, 120)], 0.2).significant).toBe(true);
  });

  it('is undefined when a variant has no observations', () => {
    expect(testSignificance([counts(100, 10), counts(0, 0)])).toMatchObject({
      statistic: null,
      pValue: null,
      minExpectedCount: null,
      significant: false,
      smallSample: false,
      exactPValue: null,
    });
  });

  it('is undefined when every subject converted', () => {
    expect(testSignificance([counts(50, 50), counts(60, 60), counts(70, 70)]).pValue).toBeNull();
  });

  it('is undefined when no subject converted', () => {
    expect(testSignificance([counts(50, 0), counts(60, 0)]).pValue).toBeNull();
  });

  it('is undefined for a single variant', () => {
    expect(testSignificance([counts(100, 10)])).toMatchObject({ pValue: null, degreesOfFreedom: 0 });
  });

  it('gives a p-value of 1 when the rates are identical', () => {
    expect(testSignificance([counts(400, 40), counts(200, 20), counts(100, 10)]).pValue).toBe(1);
  });

  it('rejects more successes than observations', () => {
    expect(() => testSignificance([counts(10, 11), counts(10, 5)])).toThrow(RangeError);
  });

  it('rejects negative counts', () => {
    expect(() => testSignificance([counts(10, 5), counts(-10, 0)])).toThrow(RangeError);
  });

  it('rejects fractional counts', () => {
    expect(() => testSignificance([counts(10, 5), counts(10, 2.5)])).toThrow(RangeError);
  });

  it('rejects an alpha outside (0, 1)', () => {
    expect(() => testSignificance([counts(10, 5), counts(10, 2)], 1)).toThrow(RangeError);
  });
});
