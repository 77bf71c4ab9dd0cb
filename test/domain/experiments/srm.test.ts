import { describe, expect, it } from 'vitest';
import { sampleRatioMismatch } from '../../../src/domain/experiments/index.js';
import { expectClose, reference } from './reference.js';

describe('sampleRatioMismatch against SciPy', () => {
  it.each(reference.sampleRatioMismatch)('matches the p-value for $name', (c) => {
    expectClose(sampleRatioMismatch(c.observations, c.weights).pValue, c.pValue);
  });

  it.each(reference.sampleRatioMismatch)('matches the statistic for $name', (c) => {
    expectClose(sampleRatioMismatch(c.observations, c.weights).statistic, c.statistic);
  });

  it.each(reference.sampleRatioMismatch)('reaches the same mismatch decision for $name', (c) => {
    expect(sampleRatioMismatch(c.observations, c.weights).mismatch).toBe(c.mismatch);
  });
});

describe('sampleRatioMismatch', () => {
  it('normalises weights that do not sum to 1', () => {
    expect(sampleRatioMismatch([2480, 7520], [2, 6])).toEqual(
      sampleRatioMismatch([2480, 7520], [0.25, 0.75]),
    );
  });

  it('flags a mismatch when p is below 0.001', () => {
    expect(sampleRatioMismatch([5000, 5400], [1, 1]).mismatch).toBe(true);
  });

  it('does not flag a split within sampling noise', () => {
    expect(sampleRatioMismatch([5000, 5050], [1, 1]).mismatch).toBe(false);
  });

  it('has a null p-value without observations', () => {
    expect(sampleRatioMismatch([0, 0, 0], [1, 1, 1])).toEqual({
      statistic: null,
      pValue: null,
      mismatch: false,
    });
  });

  it('has a null p-value for a single variant', () => {
    expect(sampleRatioMismatch([120], [1]).pValue).toBeNull();
  });

  it('rejects a weight list of a different length', () => {
    expect(() => sampleRatioMismatch([10, 10], [1])).toThrow(RangeError);
  });

  it('rejects a weight that is not positive', () => {
    expect(() => sampleRatioMismatch([10, 10], [1, 0])).toThrow(RangeError);
  });

  it('rejects negative observation counts', () => {
    expect(() => sampleRatioMismatch([10, -1], [1, 1])).toThrow(RangeError);
  });
});
