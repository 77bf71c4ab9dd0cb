import { describe, expect, it } from 'vitest';
import {
  comparable,
  confidenceSequence,
  criticalZ,
  mixtureRhoSquared,
} from '../../../src/domain/experiments/confidence-sequence.js';
import { restrictedRates } from '../../../src/domain/experiments/restricted-rates.js';
import {
  compareWithControlSequentially,
  type SequentialState,
  sequentialComparison,
} from '../../../src/domain/experiments/sequential.js';
import { compareWithControl } from '../../../src/domain/experiments/statistics.js';
import { counts, expectClose } from './reference.js';
import { sequentialReference } from './sequential-reference.js';

describe('restrictedRates against SciPy', () => {
  it.each(sequentialReference.restrictedRates)(
    'matches the most likely rates of $treatment.successes/$treatment.observations against $control.successes/$control.observations at a difference of $difference',
    (c) => {
      const rates = restrictedRates(c.control, c.treatment, c.difference);
      expectClose(rates.control, c.controlRate);
      expectClose(rates.treatment, c.treatmentRate);
    },
  );

  it('gives both variants the pooled rate at a difference of 0', () => {
    const rates = restrictedRates(counts(300, 30), counts(100, 30), 0);
    expect(rates.control).toBeCloseTo(60 / 400, 14);
    expect(rates.treatment).toBeCloseTo(60 / 400, 14);
  });
});

describe('mixtureRhoSquared', () => {
  it.each(sequentialReference.sequential)('matches the reference tuning for $name', (c) => {
    expectClose(mixtureRhoSquared(c.alpha, c.expectedObservations), c.rhoSquared);
  });

  it('makes the interval narrowest near the expected number of observations', () => {
    const pair = comparable(counts(2500, 250), counts(2500, 280));
    if (pair === null) throw new Error('comparable counts');
    const width = (expected: number) => {
      const interval = confidenceSequence(pair, mixtureRhoSquared(0.05, expected), 0.05);
      return interval.upper - interval.lower;
    };
    expect(width(5_000)).toBeLessThan(width(500));
    expect(width(5_000)).toBeLessThan(width(50_000));
  });

  it('rejects an expected number of observations that is not positive', () => {
    expect(() => mixtureRhoSquared(0.05, 0)).toThrow(RangeError);
  });
});

describe('sequentialComparison against SciPy', () => {
  const compare = (c: (typeof sequentialReference.sequential)[number]) =>
    sequentialComparison({
      control: c.control,
      treatment: c.treatment,
      alpha: c.alpha,
      expectedObservations: c.expectedObservations,
    });

  it.each(sequentialReference.sequential)('matches the difference for $name', (c) => {
    expectClose(compare(c).difference, c.difference);
  });

  it.each(sequentialReference.sequential)('matches the always-valid p-value for $name', (c) => {
    expectClose(compare(c).alwaysValidPValue, c.alwaysValidPValue);
  });

  it.each(sequentialReference.sequential)('matches the confidence sequence for $name', (c) => {
    const { confidenceSequence: interval } = compare(c);
    expectClose(interval?.lower, c.lower);
    expectClose(interval?.upper, c.upper);
  });

  it.each(sequentialReference.sequential)('matches the critical z for $name', (c) => {
    const pair = comparable(c.control, c.treatment);
    if (pair === null) throw new Error('comparable counts');
    expectClose(criticalZ(pair, c.rhoSquared, c.alpha), c.criticalZ);
  });

  it.each(sequentialReference.sequential)('reaches the same decision for $name', (c) => {
    expect(compare(c).decision).toBe(c.significant ? 'significant' : 'collecting');
  });
});

describe('sequentialComparison', () => {
  it('is collecting, with no figures, while a variant has no observations', () => {
    expect(sequentialComparison({ control: counts(100, 10), treatment: counts(0, 0) })).toEqual({
      difference: null,
      alwaysValidPValue: null,
      confidenceSequence: null,
      confidence: 0.95,
      decision: 'collecting',
      state: null,
    });
  });

  it('is significant exactly when its interval leaves out a difference of 0', () => {
    for (const c of sequentialReference.sequential) {
      const result = sequentialComparison({ control: c.control, treatment: c.treatment, alpha: c.alpha });
      const interval = result.confidenceSequence;
      const excludesZero = interval !== null && (interval.lower > 0 || interval.upper < 0);
      expect(result.decision === 'significant', c.name).toBe(excludesZero);
    }
  });

  it('asks for more evidence than the fixed-horizon z-test on the same counts', () => {
    for (const c of sequentialReference.sequential) {
      const [fixed] = compareWithControl([c.control, c.treatment], c.alpha);
      if (fixed?.pValue == null) continue;
      const result = sequentialComparison({ control: c.control, treatment: c.treatment, alpha: c.alpha });
      expect(result.alwaysValidPValue, c.name).toBeGreaterThanOrEqual(fixed.pValue);
    }
  });

  it('is not significant when the test ended before the difference was shown', () => {
    const result = sequentialComparison({
      control: counts(500, 50),
      treatment: counts(500, 55),
      ended: true,
    });
    expect(result.decision).toBe('not_significant');
  });

  it('stays significant when the test ended after the difference was shown', () => {
    const result = sequentialComparison({
      control: counts(5000, 500),
      treatment: counts(5000, 650),
      ended: true,
    });
    expect(result.decision).toBe('significant');
  });

  it('counts a rise of the treatment as a positive difference', () => {
    const result = sequentialComparison({ control: counts(5000, 500), treatment: counts(5000, 650) });
    expect(result.difference).toBeCloseTo(0.03, 12);
    expect(result.confidenceSequence?.lower).toBeGreaterThan(0);
  });

  it('rejects alpha outside (0, 1)', () => {
    expect(() =>
      sequentialComparison({ control: counts(10, 1), treatment: counts(10, 2), alpha: 1 }),
    ).toThrow(RangeError);
  });
});

describe('sequentialComparison with the stored state', () => {
  // A clear difference at the first look that later data dilute.
  const firstLook = { control: counts(2000, 200), treatment: counts(2000, 300) };
  const secondLook = { control: counts(6000, 600), treatment: counts(6000, 700) };

  it('keeps the smallest p-value seen, and the significance it brought', () => {
    const first = sequentialComparison(firstLook);
    const fromCountsAlone = sequentialComparison(secondLook);
    const withState = sequentialComparison({ ...secondLook, previous: first.state });
    expect(first.decision).toBe('significant');
    expect(fromCountsAlone.decision).toBe('collecting');
    expect(withState.alwaysValidPValue).toBe(first.alwaysValidPValue);
    expect(withState.decision).toBe('significant');
  });

  it('reports the intersection of the intervals seen', () => {
    const first = sequentialComparison(firstLook);
    const second = sequentialComparison(secondLook);
    const withState = sequentialComparison({ ...secondLook, previous: first.state });
    expect(withState.confidenceSequence).toEqual({
      lower: Math.max(first.confidenceSequence?.lower ?? -1, second.confidenceSequence?.lower ?? -1),
      upper: Math.min(first.confidenceSequence?.upper ?? 1, second.confidenceSequence?.upper ?? 1),
    });
  });

  it('starts the intersection again when the intervals stop overlapping', () => {
    const previous: SequentialState = { observations: 100, alwaysValidPValue: 0.4, lower: 0.5, upper: 0.6 };
    const current = sequentialComparison(secondLook);
    const withState = sequentialComparison({ ...secondLook, previous });
    expect(withState.confidenceSequence).toEqual(current.confidenceSequence);
    expect(withState.alwaysValidPValue).toBe(Math.min(0.4, current.alwaysValidPValue ?? 1));
  });

  it('stores a state that survives a JSON round trip', () => {
    const first = sequentialComparison(firstLook);
    const restored = JSON.parse(JSON.stringify(first.state)) as SequentialState;
    expect(sequentialComparison({ ...secondLook, previous: restored })).toEqual(
      sequentialComparison({ ...secondLook, previous: first.state }),
    );
  });

  it('refuses a state taken with more observations than the counts hold', () => {
    const later = sequentialComparison(secondLook);
    expect(() => sequentialComparison({ ...firstLook, previous: later.state })).toThrow(RangeError);
  });
});

describe('compareWithControlSequentially against SciPy', () => {
  const comparisons = sequentialReference.families.flatMap((family) =>
    family.comparisons.map((expected, index) => ({
      name: `${family.name}, variant ${index + 1}`,
      family,
      index,
      expected,
    })),
  );
  const compare = (family: (typeof sequentialReference.families)[number]) =>
    compareWithControlSequentially(family.variants, {
      alpha: family.alpha,
      expectedObservations: family.expectedObservations,
    });

  it.each(comparisons)('matches the p-values for $name', ({ family, index, expected }) => {
    const result = compare(family)[index];
    expectClose(result?.alwaysValidPValue, expected.alwaysValidPValue);
    expectClose(result?.adjustedPValue, expected.adjustedPValue);
  });

  it.each(comparisons)('matches the confidence sequence for $name', ({ family, index, expected }) => {
    const interval = compare(family)[index]?.confidenceSequence ?? null;
    expectClose(interval?.lower ?? null, expected.lower);
    expectClose(interval?.upper ?? null, expected.upper);
  });

  it.each(comparisons)('reaches the same decision for $name', ({ family, index, expected }) => {
    expect(compare(family)[index]?.decision).toBe(expected.significant ? 'significant' : 'collecting');
  });
});

describe('compareWithControlSequentially', () => {
  it('runs each comparison at alpha divided by the number of comparisons', () => {
    const result = compareWithControlSequentially(
      [counts(100, 10), counts(100, 12), counts(100, 14), counts(100, 9)],
      { alpha: 0.06 },
    );
    expect(result.map((c) => c.confidence)).toEqual([0.98, 0.98, 0.98]);
  });

  it('returns no comparisons for a lone control', () => {
    expect(compareWithControlSequentially([counts(100, 10)])).toEqual([]);
  });

  it('gives each comparison its own stored state', () => {
    const variants = [counts(2000, 200), counts(2000, 300), counts(2000, 205)];
    const first = compareWithControlSequentially(variants);
    const later = [counts(6000, 600), counts(6000, 700), counts(6000, 610)];
    const withState = compareWithControlSequentially(later, { previous: first.map((c) => c.state) });
    expect(withState[0]?.alwaysValidPValue).toBe(first[0]?.alwaysValidPValue);
    expect(withState[1]?.state?.observations).toBe(12_000);
  });
});
