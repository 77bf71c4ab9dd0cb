import { describe, expect, it } from 'vitest';
import { relativeLift, wilsonInterval } from '../../../src/domain/experiments/index.js';
import { counts, expectClose, reference } from './reference.js';

describe('wilsonInterval', () => {
  it.each(reference.wilson)('matches the reference bounds for $successes of $observations', (c) => {
    const interval = wilsonInterval(c.successes, c.observations, c.confidence);
    expectClose(interval?.lower ?? null, c.lower);
    expectClose(interval?.upper ?? null, c.upper);
  });

  it('is null without observations', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });

  it('starts at exactly 0 when nothing converted', () => {
    expect(wilsonInterval(0, 10)?.lower).toBe(0);
  });

  it('ends at exactly 1 when everything converted', () => {
    expect(wilsonInterval(10, 10)?.upper).toBe(1);
  });

  it('contains the observed rate', () => {
    const interval = wilsonInterval(37, 120);
    expect(interval?.lower).toBeLessThan(37 / 120);
    expect(interval?.upper).toBeGreaterThan(37 / 120);
  });

  it('widens with a higher confidence', () => {
    const narrow = wilsonInterval(30, 100, 0.9);
    const wide = wilsonInterval(30, 100, 0.99);
    expect((wide?.upper ?? 0) - (wide?.lower ?? 0)).toBeGreaterThan(
      (narrow?.upper ?? 0) - (narrow?.lower ?? 0),
    );
  });

  it('rejects a confidence outside (0, 1)', () => {
    expect(() => wilsonInterval(3, 10, 95)).toThrow(RangeError);
  });
});

describe('relativeLift', () => {
  it.each(reference.relativeLift)(
    'matches the reference for $treatment.successes of $treatment.observations against $control.successes of $control.observations',
    (c) => {
      const result = relativeLift(c.control, c.treatment, c.confidence);
      if (c.result === null) {
        expect(result).toBeNull();
        return;
      }
      expectClose(result?.lift ?? null, c.result.lift);
      expectClose(result?.lower ?? null, c.result.lower);
      expectClose(result?.upper ?? null, c.result.upper);
    },
  );

  it('is the relative change of the treatment rate over the control rate', () => {
    expect(relativeLift(counts(1000, 100), counts(500, 60))?.lift).toBeCloseTo(0.2, 12);
  });

  it('brackets the lift with its interval', () => {
    const result = relativeLift(counts(2000, 180), counts(2000, 230));
    expect(result?.lower).toBeLessThan(result?.lift ?? Number.NaN);
    expect(result?.upper).toBeGreaterThan(result?.lift ?? Number.NaN);
  });

  it('never puts the lower bound below -1', () => {
    expect(relativeLift(counts(50, 40), counts(50, 1))?.lower).toBeGreaterThan(-1);
  });

  it('is null when the control has no successes', () => {
    expect(relativeLift(counts(100, 0), counts(100, 5))).toBeNull();
  });

  it('is null when the treatment has no observations', () => {
    expect(relativeLift(counts(100, 10), counts(0, 0))).toBeNull();
  });

  it('has no interval when the treatment has no successes', () => {
    expect(relativeLift(counts(100, 10), counts(100, 0))).toEqual({ lift: -1, lower: null, upper: null });
  });
});
