import { describe, expect, it } from 'vitest';
import { compareWithControl, holmAdjust } from '../../../src/domain/experiments/index.js';
import { counts, expectClose, reference } from './reference.js';

describe('holmAdjust', () => {
  it.each(reference.holm)('matches the reference adjustment of $pValues', (c) => {
    const adjusted = holmAdjust(c.pValues);
    c.adjusted.forEach((expected, i) => {
      expectClose(adjusted[i], expected);
    });
  });

  it('multiplies the smallest p-value by the size of the family', () => {
    expect(holmAdjust([0.04, 0.01, 0.03])[1]).toBeCloseTo(0.03, 15);
  });

  it('keeps adjusted p-values in the order of the raw p-values', () => {
    expect(holmAdjust([0.01, 0.011, 0.5])).toEqual([0.03, 0.03, 0.5]);
  });

  it('caps adjusted p-values at 1', () => {
    expect(holmAdjust([0.6, 0.7, 0.8])).toEqual([1, 1, 1]);
  });

  it('keeps nulls null and leaves them out of the family size', () => {
    expect(holmAdjust([0.01, null, 0.02])).toEqual([0.02, null, 0.02]);
  });

  it('returns an empty list for no p-values', () => {
    expect(holmAdjust([])).toEqual([]);
  });

  it('rejects p-values outside [0, 1]', () => {
    expect(() => holmAdjust([0.2, 1.5])).toThrow(RangeError);
  });
});

describe('compareWithControl against SciPy', () => {
  const pairwise = reference.significance.flatMap((c) =>
    c.pairwise.map((expected, i) => ({
      name: `${c.name}, variant ${i + 1}`,
      variants: c.variants,
      i,
      expected,
    })),
  );

  it.each(pairwise)('matches the raw p-value for $name', ({ variants, i, expected }) => {
    expectClose(compareWithControl(variants)[i]?.pValue, expected.pValue);
  });

  it.each(pairwise)('matches the Holm-adjusted p-value for $name', ({ variants, i, expected }) => {
    expectClose(compareWithControl(variants)[i]?.adjustedPValue, expected.adjustedPValue);
  });

  it.each(pairwise)('reaches the same significance decision for $name', ({ variants, i, expected }) => {
    expect(compareWithControl(variants)[i]?.significant).toBe(expected.significant);
  });

  it.each(pairwise)(
    'warns of a small sample alike, with the exact test, for $name',
    ({ variants, i, expected }) => {
      const comparison = compareWithControl(variants)[i];
      expect(comparison?.smallSample).toBe(expected.smallSample);
      expectClose(comparison?.exactPValue, expected.exactPValue);
    },
  );
});

describe('compareWithControl', () => {
  it('returns one comparison per non-control variant', () => {
    expect(
      compareWithControl([counts(100, 10), counts(100, 12), counts(100, 14), counts(100, 9)]),
    ).toHaveLength(3);
  });

  it('returns no comparisons for a lone control', () => {
    expect(compareWithControl([counts(100, 10)])).toEqual([]);
  });

  it('leaves a single comparison unadjusted', () => {
    const [only] = compareWithControl([counts(1000, 100), counts(1000, 130)]);
    expect(only?.adjustedPValue).toBe(only?.pValue);
  });

  it('judges significance on the adjusted p-value', () => {
    const [, second] = compareWithControl([counts(1000, 100), counts(1000, 115), counts(1000, 130)]);
    expect(second?.pValue).toBeLessThan(0.05);
    expect(second?.adjustedPValue).toBeGreaterThan(0.05);
    expect(second?.significant).toBe(false);
  });

  it('gives a null p-value for a variant without observations without counting it', () => {
    const result = compareWithControl([counts(100, 10), counts(100, 25), counts(0, 0)]);
    expect(result[1]).toEqual({
      pValue: null,
      adjustedPValue: null,
      significant: false,
      smallSample: false,
      exactPValue: null,
    });
    expect(result[0]?.adjustedPValue).toBe(result[0]?.pValue);
  });
});
