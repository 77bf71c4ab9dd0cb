import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { SignificanceMethod, VariantCounts } from '../../../src/domain/experiments/index.js';

export interface SignificanceCase {
  name: string;
  variants: VariantCounts[];
  method: SignificanceMethod;
  degreesOfFreedom: number;
  statistic: number | null;
  chiSquared: number | null;
  pValue: number | null;
  minExpectedCount: number | null;
  significant: boolean;
  smallSample: boolean;
  exactPValue: number | null;
  pairwise: {
    pValue: number | null;
    adjustedPValue: number | null;
    significant: boolean;
    smallSample: boolean;
    exactPValue: number | null;
  }[];
}

export interface FisherExactCase {
  control: VariantCounts;
  treatment: VariantCounts;
  pValue: number;
}

export interface SampleRatioMismatchCase {
  name: string;
  observations: number[];
  weights: number[];
  statistic: number | null;
  pValue: number | null;
  mismatch: boolean;
}

export interface WilsonCase {
  successes: number;
  observations: number;
  confidence: number;
  lower: number;
  upper: number;
}

export interface RelativeLiftCase {
  control: VariantCounts;
  treatment: VariantCounts;
  confidence: number;
  result: { lift: number; lower: number | null; upper: number | null } | null;
}

export interface HolmCase {
  pValues: (number | null)[];
  adjusted: (number | null)[];
}

export interface AssignmentCase {
  testId: string;
  subjectId: string;
  point: number;
  variants: { id: string; weight: number }[];
  variantId: string;
}

export interface Reference {
  scipy: string;
  significance: SignificanceCase[];
  sampleRatioMismatch: SampleRatioMismatchCase[];
  wilson: WilsonCase[];
  relativeLift: RelativeLiftCase[];
  holm: HolmCase[];
  fisherExact: FisherExactCase[];
  assignment: AssignmentCase[];
}

export const reference: Reference = JSON.parse(
  readFileSync(new URL('../../fixtures/experiments/reference.json', import.meta.url), 'utf8'),
);

export const RELATIVE_TOLERANCE = 1e-9;
export const ABSOLUTE_TOLERANCE = 1e-12;

/** Agreement to 1e-9 relative or 1e-12 absolute; null must match null. */
export function expectClose(actual: number | null | undefined, expected: number | null): void {
  if (expected === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).toBeTypeOf('number');
  const error = Math.abs((actual as number) - expected);
  const tolerance = Math.max(ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE * Math.abs(expected));
  expect(error, `${actual} differs from ${expected} by ${error}`).toBeLessThanOrEqual(tolerance);
}

export function counts(observations: number, successes: number): VariantCounts {
  return { observations, successes };
}
