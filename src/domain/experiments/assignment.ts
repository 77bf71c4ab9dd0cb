import { hash } from 'node:crypto';

export interface WeightedVariant {
  id: string;
  weight: number;
}

const TWO_POW_52 = 2 ** 52;

/** Bounds of a variant weight: relative shares up to 1:10^12 apart, far within the 52-bit point. */
export const MIN_VARIANT_WEIGHT = 0.000001;
export const MAX_VARIANT_WEIGHT = 1_000_000;

/**
 * Each weight's share of the whole, summing to 1. Weights are scaled by the largest first, so that no
 * sum overflows to infinity (1e308 + 1e308) whatever was stored; a weight too small to register next to
 * the largest gets a share of 0.
 */
export function weightShares(weights: readonly number[]): number[] {
  for (const weight of weights) {
    if (!(Number.isFinite(weight) && weight > 0))
      throw new RangeError(`weights must be positive, got ${weight}`);
  }
  const largest = Math.max(...weights);
  const scaled = weights.map((weight) => weight / largest);
  const total = scaled.reduce((sum, weight) => sum + weight, 0);
  return scaled.map((weight) => weight / total);
}

/**
 * Maps `${testId}:${subjectId}` to a number uniform in [0, 1) from the first 52 bits of its SHA-256
 * digest; 52 bits fit a double exactly, so every runtime and language derives the same number.
 */
export function assignmentPoint(testId: string, subjectId: string): number {
  const digest = hash('sha256', `${testId}:${subjectId}`, 'hex');
  return Number.parseInt(digest.slice(0, 13), 16) / TWO_POW_52;
}

/**
 * Sticky assignment of a subject to a variant: the same test, subject and variant list always give the
 * same variant. The point from `assignmentPoint` falls into the variant whose slice of the cumulative
 * normalised weights, in the given order, contains it.
 */
export function assignVariant(
  testId: string,
  subjectId: string,
  variants: readonly WeightedVariant[],
): string {
  return variantAssigner(testId, variants)(subjectId);
}

/**
 * `assignVariant` for many subjects of one test: the cumulative bounds are computed once, not per subject.
 */
export function variantAssigner(
  testId: string,
  variants: readonly WeightedVariant[],
): (subjectId: string) => string {
  const last = variants[variants.length - 1];
  if (last === undefined) throw new RangeError('cannot assign a subject without variants');
  const shares = weightShares(variants.map(({ weight }) => weight));
  const bounds: number[] = [];
  let cumulative = 0;
  for (const share of shares) {
    cumulative += share;
    bounds.push(cumulative);
  }
  return (subjectId) => {
    const point = assignmentPoint(testId, subjectId);
    for (let index = 0; index < bounds.length; index++) {
      if (point < (bounds[index] as number)) return (variants[index] as WeightedVariant).id;
    }
    // Rounding can leave the last cumulative bound a hair below 1.
    return last.id;
  };
}
