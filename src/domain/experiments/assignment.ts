import { createHash } from 'node:crypto';

export interface WeightedVariant {
  id: string;
  weight: number;
}

const TWO_POW_52 = 2 ** 52;

/**
 * Maps `${testId}:${subjectId}` to a number uniform in [0, 1) from the first 52 bits of its SHA-256
 * digest; 52 bits fit a double exactly, so every runtime and language derives the same number.
 */
export function assignmentPoint(testId: string, subjectId: string): number {
  const digest = createHash('sha256').update(`${testId}:${subjectId}`, 'utf8').digest('hex');
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
  if (variants.length === 0) throw new RangeError('cannot assign a subject without variants');
  let total = 0;
  for (const { id, weight } of variants) {
    if (!(Number.isFinite(weight) && weight > 0)) {
      throw new RangeError(`variant ${id} must have a positive weight, got ${weight}`);
    }
    total += weight;
  }
  const point = assignmentPoint(testId, subjectId);
  let cumulative = 0;
  for (const { id, weight } of variants) {
    cumulative += weight / total;
    if (point < cumulative) return id;
  }
  // Rounding can leave the last cumulative bound a hair below 1.
  const last = variants[variants.length - 1];
  if (last === undefined) throw new RangeError('cannot assign a subject without variants');
  return last.id;
}
